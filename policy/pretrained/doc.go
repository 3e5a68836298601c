// Package pretrained holds the architectures of pretrained language models that graftrl can use
// as a policy (Llama: SmolLM2) as plain types, and reads their float32 weights from a model
// file (a GGUF through modelfile). It does not depend on GoMLX, so that both the training graph
// (package policy) and the pure-Go sampler (policy/host) build from the same values.
package pretrained

// Package bpe is the tokenizer of pretrained byte-level BPE language models (GPT-2's scheme, as
// SmolLM2 uses it): the byte↔unicode alphabet, merges applied by rank, the "smollm"
// pre-tokenisation (each digit alone, then GPT-2's split), special tokens matched whole in the
// text, decoding with invalid UTF-8 replaced as Hugging Face tokenizers replaces it, and the
// ChatML chat template of SmolLM2 rendered without a template engine.
//
// Its methods have the shapes of tokens.Vocab's (Size, Encode, Decode), so that one interface
// defined where a policy consumes a tokenizer can hold either. It imports only the standard
// library and modelfile (FromGGUF).
package bpe

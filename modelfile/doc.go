// Package modelfile reads and writes pretrained model files: GGUF (versions 2 and 3), the
// format of llama.cpp, with its metadata, its tensor directory and the tensors themselves,
// dequantised to float32 on demand (F32, F16, BF16, Q8_0, Q4_0, Q4_1), and written with F32
// tensors (WriteGGUF); and safetensors, the format of Hugging Face checkpoints (one file or an
// index's shards; F32, F16 and BF16 read, F32 written). It knows no model's architecture.
//
// The reader trusts no length it reads: every count, length, dimension and offset is checked
// against the bytes left in the file and against the format's own limits before anything is
// allocated, so a truncated or corrupted file is an error naming the field, its value and what
// was allowed, never a panic or an allocation larger than the file. The file as a whole is
// bounded by internal/limits (limits.Model).
package modelfile

"""llama.cpp: loading and running GGUF models, LoRA adapters, batched decoding, checking the build."""

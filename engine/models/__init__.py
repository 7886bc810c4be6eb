"""Models: the registry of GGUF files, the catalog of recommended models, Hugging Face downloads."""

"""Chapter 10: FX graph-mode quantization, checked against torch.ao.quantization."""

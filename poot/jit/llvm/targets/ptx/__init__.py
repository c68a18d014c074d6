"""The PTX target (NVIDIA): target.py lowers KIR to PTX text for the CUDA driver to load."""

"""The AMDGCN target (ROCm): target.py lowers KIR to an object, hsaco.py links it into a HSACO."""

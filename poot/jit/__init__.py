"""poot.jit: KIR, kernel generation, the @kernel importer, LLVM lowering, caches, running plans."""

"""Helpers shared by the per-area kernel packages (transformer, nn, math): errors naming an argument, float
widening for computation, int4 packing."""

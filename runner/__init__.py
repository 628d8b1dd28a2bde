"""Everything that touches a device: loading problems, inputs, correctness, timing, capture, isolation.

Importable with only torch and triton installed (it runs on GPU machines that have nothing else).
"""

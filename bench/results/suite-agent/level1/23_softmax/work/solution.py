"""Row softmax with 16-byte copies on rows of any length: each row split into an unaligned head, a
16-byte-aligned body whose length is a whole number of 4-float units, and a tail.

The first agent round (1.551x) reads aligned rows at 96-97% of the roofline, but the two cases of
odd width run at 68% (16384 x 4097) and 46% (2048 x 65535): their rows start at addresses that are
not 16-byte aligned, so no load or store can be proven aligned and every copy is a lone 4-byte
ld.global / st.global (nv.scalar-access, lines 23, 25, 37, 47 and 48 of the brief); 4097 columns
also took an 8192-wide block, half of it masked. Here the row's first h elements (h < 4, so that
the rest starts on a 16-byte boundary: h follows from the row's index, its stride and the base
address) and its last few are loaded as two masked 4-element vectors, and the body in between is
addressed from a pointer declared 16-byte aligned with a length passed in units of 4 floats, so its
masks are constant over each unit and its copies are 128-bit (the 4097-wide rows now fit a
4096-wide block). Rows up to 32768 floats are held whole in registers (one read), longer ones take
one online pass (running maximum and rescaled sum per lane) and one normalising pass.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

WHOLE_ROW_LIMIT = 32768
CHUNK = 4096


@triton.jit
def _row_parts(base_units, row, stride, n_cols):
    """The row's head length (up to a 16-byte boundary) and its body's length in units of 4 floats."""
    head = tl.minimum((4 - (base_units + row * stride) % 4) % 4, n_cols)
    return head, (n_cols - head) // 4



@triton.jit
def softmax_whole_row_kernel(x_ptr, y_ptr, n_cols, stride, base_units, ALIGNED: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    head, body_units = _row_parts(base_units, row, stride, n_cols)
    body_len = body_units * 4
    tail_start = head + body_len
    x_row, y_row = x_ptr + row * stride, y_ptr + row * stride
    edge = tl.arange(0, 4)
    head_mask = edge < head
    tail_mask = tail_start + edge < n_cols
    cols = tl.arange(0, BLOCK)
    body_mask = cols < body_len
    x_body, y_body = x_row + head, y_row + head
    if ALIGNED:
        x_body, y_body = tl.multiple_of(x_body, 16), tl.multiple_of(y_body, 16)
    x = tl.load(x_body + cols, mask=body_mask, other=float("-inf"))
    x_head = tl.load(x_row + edge, mask=head_mask, other=float("-inf"))
    x_tail = tl.load(x_row + tail_start + edge, mask=tail_mask, other=float("-inf"))
    m = tl.maximum(tl.max(x, axis=0), tl.maximum(tl.max(x_head, axis=0), tl.max(x_tail, axis=0)))
    e = tl.exp(x - m)
    e_head = tl.exp(x_head - m)
    e_tail = tl.exp(x_tail - m)
    inv = 1.0 / (tl.sum(e, axis=0) + tl.sum(e_head, axis=0) + tl.sum(e_tail, axis=0))
    tl.store(y_body + cols, e * inv, mask=body_mask)
    tl.store(y_row + edge, e_head * inv, mask=head_mask)
    tl.store(y_row + tail_start + edge, e_tail * inv, mask=tail_mask)


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, n_cols, stride, base_units, ALIGNED: tl.constexpr, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    head, body_units = _row_parts(base_units, row, stride, n_cols)
    body_len = body_units * 4
    tail_start = head + body_len
    x_row, y_row = x_ptr + row * stride, y_ptr + row * stride
    x_body, y_body = x_row + head, y_row + head
    if ALIGNED:
        x_body, y_body = tl.multiple_of(x_body, 16), tl.multiple_of(y_body, 16)
    edge = tl.arange(0, 4)
    head_mask = edge < head
    tail_mask = tail_start + edge < n_cols
    x_head = tl.load(x_row + edge, mask=head_mask, other=float("-inf"))
    x_tail = tl.load(x_row + tail_start + edge, mask=tail_mask, other=float("-inf"))
    cols = tl.arange(0, CHUNK)
    lane_max = tl.full((CHUNK,), float("-inf"), dtype=tl.float32)
    lane_sum = tl.zeros((CHUNK,), dtype=tl.float32)
    # offsets as chunk index x CHUNK (not a running start), so their 16-byte alignment stays provable
    for k in range(0, tl.cdiv(body_len, CHUNK)):
        offs = k * CHUNK + cols
        x = tl.load(x_body + offs, mask=offs < body_len, other=float("-inf"))
        new_max = tl.maximum(lane_max, x)
        seen = new_max > float("-inf")
        rescale = tl.where(seen, tl.exp(lane_max - new_max), 0.0)
        lane_sum = lane_sum * rescale + tl.where(seen, tl.exp(x - new_max), 0.0)
        lane_max = new_max
    m = tl.maximum(tl.max(lane_max, axis=0), tl.maximum(tl.max(x_head, axis=0), tl.max(x_tail, axis=0)))
    d = tl.sum(tl.where(lane_max > float("-inf"), lane_sum * tl.exp(lane_max - m), 0.0), axis=0)
    d += tl.sum(tl.exp(x_head - m), axis=0) + tl.sum(tl.exp(x_tail - m), axis=0)
    inv = 1.0 / d
    tl.store(y_row + edge, tl.exp(x_head - m) * inv, mask=head_mask)
    tl.store(y_row + tail_start + edge, tl.exp(x_tail - m) * inv, mask=tail_mask)
    for k in range(0, tl.cdiv(body_len, CHUNK)):
        offs = k * CHUNK + cols
        mask = offs < body_len
        x = tl.load(x_body + offs, mask=mask, other=float("-inf"))
        tl.store(y_body + offs, tl.exp(x - m) * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        # one head aligns both rows only where x and y sit at the same offset from a 16-byte boundary
        # (always, for a fresh x); otherwise the body is not declared aligned (correct, unvectorized)
        base_units = (x.data_ptr() // 4) % 4
        aligned = x.data_ptr() % 4 == 0 and base_units == (y.data_ptr() // 4) % 4
        if n_cols <= WHOLE_ROW_LIMIT:
            block = triton.next_power_of_2(max(n_cols - 3, 1))
            softmax_whole_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), base_units, ALIGNED=aligned, BLOCK=block,
                                                num_warps=max(4, min(16, block // 512)))
        else:
            softmax_online_kernel[(n_rows,)](x, y, n_cols, x.stride(0), base_units, ALIGNED=aligned, CHUNK=CHUNK,
                                             num_warps=8)
        return y

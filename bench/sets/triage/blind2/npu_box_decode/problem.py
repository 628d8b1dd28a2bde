"""Decode detection-box regressions against anchors (Faster R-CNN style, (x1, y1, x2, y2) boxes and
(dx, dy, dw, dh) deltas), fp32 [N, 4], on an Ascend NPU."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, anchors, deltas):
        w = anchors[:, 2] - anchors[:, 0]
        h = anchors[:, 3] - anchors[:, 1]
        cx = anchors[:, 0] + 0.5 * w
        cy = anchors[:, 1] + 0.5 * h
        dw = deltas[:, 2].clamp(max=math.log(1000.0 / 16))
        dh = deltas[:, 3].clamp(max=math.log(1000.0 / 16))
        pcx = deltas[:, 0] * w + cx
        pcy = deltas[:, 1] * h + cy
        pw = torch.exp(dw) * w
        ph = torch.exp(dh) * h
        return torch.stack([pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw, pcy + 0.5 * ph], dim=1)


num_boxes = 1048576


def get_inputs():
    xy = torch.rand(num_boxes, 2) * 800
    wh = torch.rand(num_boxes, 2) * 200 + 8
    anchors = torch.cat([xy, xy + wh], dim=1)
    return [anchors, torch.randn(num_boxes, 4) * 0.5]


def get_init_inputs():
    return []


def get_cases():
    return [{"num_boxes": 1048576}, {"num_boxes": 4000000}, {"num_boxes": 300000}]


def get_test_cases():
    return [{"num_boxes": 300}, {"num_boxes": 1000}]

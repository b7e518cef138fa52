"""Kinds about sizes and factors: the scale and the shapes."""

from __future__ import annotations

import math

import numpy as np

from quizsvc.problems.draws import Draws
from quizsvc.problems.kinds.base import (
    Draft,
    Level,
    _precision_note,
)
from quizsvc.problems.model import DEFAULT_PRECISION, Ask, Choice
from quizsvc.problems.pipelines import (
    Runs,
)

_HEAD_DIMS = {
    1: (4, 9, 16, 25, 36, 64, 100),
    2: (2, 3, 5, 8, 32, 128),
    3: (48, 80, 96, 112, 128, 256),
}


def build_scale(draws: Draws, level: Level) -> Draft:
    """The factor head_dim**−0.5 and the spread √d of an unscaled dot product."""
    d = draws.choice(_HEAD_DIMS[level.number])
    root = math.sqrt(d)
    runs = Runs(
        ["correct", "no_scale", "scale_by_d", "scale_multiplied"],
        {
            "factor": np.array([1.0 / root, 1.0, 1.0 / d, root]),
            "std": np.full(4, root),
        },
    )
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": f"一个注意力头的 head_dim = {d}。"
        "（1）分数要乘的缩放因子 head_dim**−0.5 是多少？"
        "（2）若 q、k 的各个分量相互独立、均值为 0、方差为 1，"
        f"点积 q·k 的标准差约为多少？两问都{_precision_note(p)['zh-CN']}，"
        f"也可以写 1/√{d} 这样的式子。",
        "en": f"An attention head has head_dim = {d}. (1) What is the scale factor "
        "head_dim**−0.5 that multiplies the scores? (2) If the components of q "
        "and k are independent with mean 0 and variance 1, about how large is "
        f"the standard deviation of q·k? Answer both {_precision_note(p)['en']}; "
        f"an expression such as 1/√{d} is fine too.",
    }
    ask = (
        Ask(
            "factor",
            "number",
            (),
            {"zh-CN": "缩放因子 head_dim**−0.5", "en": "scale factor head_dim**−0.5"},
        ),
        Ask(
            "std",
            "number",
            (),
            {"zh-CN": "q·k 的标准差", "en": "standard deviation of q·k"},
        ),
    )
    return Draft({"head_dim": d}, ask, prompt, runs)


_SHAPE_POOLS = {
    1: {"all": tuple(range(2, 10))},
    2: {"all": tuple(range(2, 17))},
    3: {
        "batch": (2, 3, 4, 6),
        "heads": (8, 12, 16, 32),
        "Tq": (5, 7, 9, 10, 11),
        "Tk": (13, 17, 20, 24),
        "d": (64, 128),
        "dv": (40, 48, 80, 96),
    },
}
SHAPE_NAMES = ("batch", "heads", "Tq", "Tk", "d", "dv")
AXIS_LABELS = {
    "batch": {"zh-CN": "batch（样本）", "en": "batch"},
    "heads": {"zh-CN": "heads（头）", "en": "heads"},
    "Tq": {"zh-CN": "Tq（query 位置）", "en": "Tq (query positions)"},
    "Tk": {"zh-CN": "Tk（key 位置）", "en": "Tk (key positions)"},
    "d": {"zh-CN": "d（每头 Q/K 维度）", "en": "d (per-head query/key size)"},
    "dv": {"zh-CN": "dv（每头 V 维度）", "en": "dv (per-head value size)"},
}


def build_shapes(draws: Draws, level: Level) -> Draft:
    """Shapes of S, A, O in a multi-head layer, and the axis each product contracts."""
    pools = _SHAPE_POOLS[level.number]
    if "all" in pools:
        sizes = dict(zip(SHAPE_NAMES, draws.sample(pools["all"], 6), strict=True))
    else:
        sizes = {name: draws.choice(pools[name]) for name in SHAPE_NAMES}
    b, h, tq, tk, dv = (sizes[n] for n in ("batch", "heads", "Tq", "Tk", "dv"))
    choices = tuple(Choice(name, AXIS_LABELS[name]) for name in SHAPE_NAMES)
    index = {name: float(i) for i, name in enumerate(SHAPE_NAMES)}

    # Row 0 is correct; row 1 writes every matrix transposed.
    runs = Runs(
        ["correct", "transposed"],
        {
            "S_shape": np.array([[b, h, tq, tk], [b, h, tk, tq]], dtype=np.float64),
            "A_shape": np.array([[b, h, tq, tk], [b, h, tk, tq]], dtype=np.float64),
            "O_shape": np.array([[b, h, tq, dv], [b, h, dv, tq]], dtype=np.float64),
            "QK_contracts": np.full(2, index["d"]),
            "AV_contracts": np.full(2, index["Tk"]),
        },
    )
    prompt = {
        "zh-CN": f"一个多头注意力层：batch = {b}，头数 heads = {h}，"
        f"query 长度 Tq = {tq}，"
        f"key 长度 Tk = {tk}，每个头的 Q/K 维度 d = {sizes['d']}，V 维度 dv = {dv}。"
        "请按 [batch, heads, 行, 列] 的顺序写出 S、A、O 的形状，并指出 QKᵀ 和 AV "
        "各自沿哪一个轴求和（被收缩掉）。",
        "en": f"A multi-head attention layer has batch = {b}, heads = {h}, "
        "query length "
        f"Tq = {tq}, key length Tk = {tk}, per-head query/key size d = "
        f"{sizes['d']} and per-head value size dv = {dv}. Give the shapes of S, "
        "A and O in the order [batch, heads, rows, columns], and say which axis "
        "each product, QKᵀ and AV, sums over (contracts).",
    }
    ask = (
        Ask("S_shape", "shape", (4,), {"zh-CN": "S 的形状", "en": "shape of S"}),
        Ask(
            "A_shape",
            "shape",
            (4,),
            {"zh-CN": "A 的形状", "en": "shape of A"},
            derive=("same_shape", "S_shape"),
        ),
        Ask(
            "O_shape",
            "shape",
            (4,),
            {"zh-CN": "O 的形状", "en": "shape of O"},
            derive=("output_shape", "A_shape"),
        ),
        Ask(
            "QK_contracts",
            "choice",
            (),
            {"zh-CN": "QKᵀ 收缩的轴", "en": "axis QKᵀ contracts"},
            choices=choices,
        ),
        Ask(
            "AV_contracts",
            "choice",
            (),
            {"zh-CN": "AV 收缩的轴", "en": "axis AV contracts"},
            choices=choices,
        ),
    )
    return Draft(
        dict(sizes),
        ask,
        prompt,
        runs,
        context={"dv": dv, "sizes": sizes},
        precision=0,
    )

"""What the grader says: each misconception explained, its short title, and
the all-correct sentence, in both languages."""

from __future__ import annotations

MISCONCEPTIONS: dict[str, dict[str, str]] = {
    "no_scale": {
        "zh-CN": "看起来漏掉了缩放：分数应当是 QKᵀ 再乘 1/√d，而不是 QKᵀ 本身。",
        "en": "It looks like the scaling was left out: the scores are QKᵀ times "
        "1/√d, not QKᵀ itself.",
    },
    "scale_by_d": {
        "zh-CN": "看起来除以了 d；缩放应当除以 √d，也就是乘 head_dim**−0.5。",
        "en": "It looks like you divided by d; the scale divides by √d, i.e. "
        "multiplies by head_dim**−0.5.",
    },
    "scale_multiplied": {
        "zh-CN": "看起来把 √d 乘了上去；缩放是除以 √d，好让点积的标准差回到 1 左右。",
        "en": "It looks like you multiplied by √d; the scale divides by √d so the "
        "dot products' spread comes back to about 1.",
    },
    "softmax_over_queries": {
        "zh-CN": "看起来是按列做的归一化；softmax 沿 key 的方向进行，"
        "每个 query 那一行的"
        "权重加起来等于 1。",
        "en": "It looks like each column was normalized; the softmax runs along the "
        "keys, so each query's row of weights sums to 1.",
    },
    "no_softmax": {
        "zh-CN": "看起来直接把分数当成了权重；"
        "必须先做 softmax，权重才会非负、每行和为 1。",
        "en": "It looks like the scores were used as weights directly; the softmax "
        "must come first, so that weights are non-negative and each row sums to 1.",
    },
    "unnormalized_exp": {
        "zh-CN": "看起来算完 exp(S − m) 就停下了，没有除以这一行的总和；除以 Σ exp 之后"
        "才是权重。",
        "en": "It looks like you stopped at exp(S − m) without dividing by the row's "
        "sum; only after dividing by Σ exp are they weights.",
    },
    "mask_ignored": {
        "zh-CN": "看起来遮罩没有起作用：被遮住的格子分数应为 −∞，权重应为 0。",
        "en": "It looks like the mask was not applied: a hidden cell's score is −∞ "
        "and its weight 0.",
    },
    "mask_after_softmax": {
        "zh-CN": "看起来是先做 softmax、再把被遮住的格子清零，却没有重新归一化；"
        "遮罩应当在 "
        "softmax 之前加到分数上。",
        "en": "It looks like hidden cells were zeroed after the softmax without "
        "renormalizing; the mask belongs on the scores, before the softmax.",
    },
    "causal_flipped": {
        "zh-CN": "看起来因果遮罩的方向反了：query i 能看见 key 0…i（过去和它自己），"
        "看不见的是未来。",
        "en": "It looks like the causal mask is flipped: query i sees keys 0…i (the "
        "past and itself); what it cannot see is the future.",
    },
    "hard_argmax": {
        "zh-CN": "看起来只取了分数最大的那一行 V；attention 的输出是所有 V 行按权重的"
        "加权和，而不是只挑一个。",
        "en": "It looks like you took only the V row with the largest score; the "
        "output is a weighted sum of all V rows, not a single pick.",
    },
    "transposed": {
        "zh-CN": "数值是对的，但行列转置了："
        "每一行对应一个 query，列对应 key（或特征）。",
        "en": "The numbers are right but transposed: each row belongs to a query, "
        "the columns to keys (or features).",
    },
    "k_not_transposed": {
        "zh-CN": "看起来用的是 K 而不是 Kᵀ：分数是 QKᵀ，也就是每个 query 与每个 key "
        "做点积。",
        "en": "It looks like K was used where Kᵀ was needed: the scores are QKᵀ, "
        "the dot product of every query with every key.",
    },
}

# Short names of the misconceptions, for headings (the ids stay in the API,
# exports and tooltips).
MISCONCEPTION_TITLES: dict[str, dict[str, str]] = {
    "no_scale": {"zh-CN": "漏掉了缩放 1/√d", "en": "Scale 1/√d left out"},
    "scale_by_d": {"zh-CN": "除以 d 而不是 √d", "en": "Divided by d, not √d"},
    "scale_multiplied": {"zh-CN": "乘了 √d 而不是除以", "en": "Multiplied by √d"},
    "softmax_over_queries": {
        "zh-CN": "按列（沿 query）做了 softmax",
        "en": "Softmax down the columns (over queries)",
    },
    "no_softmax": {"zh-CN": "把分数直接当权重", "en": "Scores used as weights"},
    "unnormalized_exp": {
        "zh-CN": "exp 之后没有归一化",
        "en": "exp without normalizing",
    },
    "mask_ignored": {"zh-CN": "遮罩没有起作用", "en": "Mask not applied"},
    "mask_after_softmax": {
        "zh-CN": "在 softmax 之后才加遮罩",
        "en": "Mask applied after the softmax",
    },
    "causal_flipped": {"zh-CN": "因果遮罩方向反了", "en": "Causal mask flipped"},
    "hard_argmax": {"zh-CN": "只取了最大的那一个", "en": "Took only the largest"},
    "transposed": {"zh-CN": "行列转置了", "en": "Rows and columns swapped"},
    "k_not_transposed": {"zh-CN": "用了 K 而不是 Kᵀ", "en": "K used instead of Kᵀ"},
}

_ALL_CORRECT = {
    "zh-CN": "全部正确：每一步都在允许的误差之内。",
    "en": "All correct: every step is within the tolerance.",
}

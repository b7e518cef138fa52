"""The equivalence policy for cloze answers, item by item and as properties.

Every cloze question of the real bank has a row in `CLOZE_TABLE`: the ways of
writing the right answer that must be accepted, and the near-misses (a
neighbouring symbol, the other axis, the wrong sign) that must stay wrong, so
that loosening the policy can never let a wrong answer through.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quizsvc.bank as bank
from quizsvc.bank import canonical_answer, check_answer

CLOZE_TABLE: dict[str, tuple[list[str], list[str]]] = {
    "l16-impl-causal-flag": (
        ["6", "6.0", "６", "6 个", "3*2", "4·3/2", "六", "六个", "4x3/2", "4 x 3 / 2",
         "约 6"],
        ["10", "16", "15", "4", "3", "-6", "因果遮罩", "十", "七", "5x7", "负六"],
    ),
    "l16-impl-cu-seqlens": (
        ["[0, 3, 8]", "[0,3,8]", "[0 3 8]", "0 3 8", "0, 3, 8", "(0, 3, 8)",
         "tensor([0, 3, 8])", "array([0, 3, 8])", "［０，３，８］",
         "torch.tensor([0, 3, 8], dtype=torch.int32)",
         "np.array([0, 3, 8], dtype=np.int32)",
         "tensor([0, 3, 8], device='cuda:0', dtype=torch.int32)", "[0,3,8,]",
         "[0, 3.0, 8.0]", "array([0., 3., 8.])"],
        ["[0, 3, 5]", "[3, 8]", "[0 3]", "[3, 5]", "[0, 8, 3]", "[1, 4, 9]", "8",
         "tensor([3, 8], dtype=torch.int32)", "[0, 3, 8.5]",
         "tensor([0, 3, 5], device='cuda:0')", "[0, 3,, 8]"],
    ),
    "l16-masking-value": (
        ["−∞", "-∞", "-inf", "-INF", "-infinity", "负无穷", "负无穷大", "-无穷",
         "−无穷", "-无穷大", "−无穷大", "负无限大", "negative infinity",
         "minus infinity", "－∞", "float('-inf')", "-float('inf')", "-np.inf",
         "-math.inf", "负的无穷大", "−∞（负无穷）", "-inf (masked)"],
        ["+∞", "∞", "inf", "无穷", "正无穷", "0", "-1", "-1e9", "负数",
         "float('inf')", "np.inf", "-float('-inf')", "∞（负无穷）"],
    ),
    "l16-qkv-analogy-word": (
        ["比喻", "类比", "打比方", "analogy", "an analogy", "An Analogy", "metaphor",
         "比喻。"],
        ["规则", "事实", "rule", "a fact", "定义", "key"],
    ),
    "l16-masking-empty-denominator": (
        ["0", "0.0", "零", "〇"],
        ["1", "Tk", "-inf", "1/Tk", "无穷", "−∞", "0/0", "未定义"],
    ),
    "l16-scaling-rmsnorm-what": (
        ["均方根", "均方根值", "RMS", "rms", "root mean square", "Root-Mean-Square"],
        ["方差", "variance", "标准差", "范数", "norm", "长度", "均值", "head_dim"],
    ),
    "l16-qkv-change-v": (
        ["V", "v", "value", "values", "值", "值矩阵", "V 矩阵", "V matrix"],
        ["K", "Q", "key", "键", "A", "O"],
    ),
    "l16-qkv-weights-depend-on": (
        ["K", "k", "Kᵀ", "K^T", "K.T", "KT", "K^{T}", "key", "keys", "键", "K转置",
         "K 的转置", "K'"],
        ["V", "value", "值", "Q", "QKᵀ", "Vᵀ", "V转置", "Q'", "Q 的转置"],
    ),
    "l16-scaling-exponent": (
        ["-0.5", "−0.5", "-1/2", "(-0.5)", "(-1/2)", "-.5", "-0.50", "－０．５", "−½",
         "负0.5", "负二分之一", "负零点五", "-\\frac{1}{2}", "-2⁻¹"],
        ["0.5", "-2", "1/2", "-0.25", "2", "二分之一", "负二", "2⁻¹"],
    ),
    "l16-scores-shape": (
        ["[Tq, Tk]", "Tq, Tk", "(Tq, Tk)", "Tq×Tk", "Tq x Tk", "TqxTk", "Tq*Tk",
         "[T_q, T_k]", "[Tq Tk]", "［Ｔｑ，Ｔｋ］", "Tq 乘 Tk", "Tq by Tk",
         "Tq 行 Tk 列", "Tq rows, Tk columns", "Tq rows and Tk columns", "Tq乘以Tk",
         "Tq 乘以 Tk", "Tq · Tk"],
        ["[Tk, Tq]", "[Tq, d]", "Tq", "TqTk", "[Tq, Tk, d]", "Tk×Tq", "[Tq, dv]",
         "Tk 乘以 Tq", "Tk · Tq", "Q·K"],
    ),
    "l16-shapes-scores-contract": (
        ["d", "D", "d_k", "dk", "head_dim", "head dim", "headdim", "d_head",
         "特征维 d", "feature axis d", "特征维", "特征维度", "特征轴", "feature axis",
         "feature dimension", "d 维", "d 轴", "d axis", "头维度", "特征维度 d",
         "d（特征维）", "每个头的维度 d", "d（每头 Q/K 维度）", "每头 Q/K 维度",
         "d (per-head query/key size)", "每头维度"],
        ["Tk", "Tq", "dv", "d_model", "hidden_size", "value 特征", "dv 维", "Tk 轴",
         "头维度 dv", "特征维度 Tk", "dv（每头 V 维度）", "Tk (key positions)"],
    ),
    "l16-shapes-output-contract": (
        ["Tk", "tk", "T_k", "Tₖ", "key 位置 Tk", "key positions Tk", "key 位置",
         "key 的位置", "键的位置", "key positions", "key position", "Tk 轴", "key 轴",
         "key axis", "Tk（key 位置）", "Tk (key positions)", "键位置", "key 长度 Tk",
         "key 维", "key 维度", "the key axis", "键的位置 Tk", "key 的位置轴"],
        ["Tq", "d", "dv", "T", "key", "query 位置", "Tq 轴", "d 维", "key 位置 Tq",
         "Tq（query 位置）", "query 维度", "键 Tq"],
    ),
    "l16-softmax-max-entry": (
        ["1", "1.0", "1.00", "e⁰", "e^0", "e^{0}", "e**0", "exp(0)", "１", "一",
         "e^(0)"],
        ["0", "e", "e^1", "0.99", "mᵢ", "-1", "负一", "零", "e¹"],
    ),
    "l16-temp-limit": (
        ["1/Tk", "1/T_k", "1/Tₖ", "1/(Tk)", "Tk^-1", "Tk^(-1)", "Tk^{-1}",
         "Tk⁻¹", "1 / Tk", "1÷Tk", "Tk分之一", "Tk 分之 1", "\\frac{1}{Tk}",
         "(1/Tk)"],
        ["Tk", "1/Tq", "0", "1", "1/T", "1/d", "Tk^1", "Tq分之一", "Tk分之二",
         "1÷Tq", "\\frac{1}{Tq}"],
    ),
    "l16-wsum-output-shape": (
        ["[Tq, dv]", "[Tq, d_v]", "Tq, dv", "(Tq, dv)", "Tq×dv", "Tq x dv",
         "TqxDv", "Tq*dv", "[Tq dv]", "Tq 乘以 dv", "Tq·dv"],
        ["[Tq, Tk]", "[Tk, dv]", "[dv, Tq]", "[Tq, d]", "[Tq]", "Tqdv", "dv 乘以 Tq"],
    ),
}  # fmt: skip


# Numeric items of the real bank: answers typed as people write them, and
# near-misses (the complementary count, a neighbouring value).
NUMERIC_TABLE: dict[str, tuple[list[str], list[str]]] = {
    "l16-masking-causal-count": (
        ["15", "15 个", "15个", "１５", "5*6/2", "十五", "十五个", "5x6/2"],
        ["10", "14 个", "25", "十", "二十五"],
    ),
    "l16-scaling-head-dim-128": (
        ["0.0884", "1/√128", "1/sqrt(128)", "128^-0.5", "√2/16", "128⁻⁰·⁵", "2⁻³·⁵",
         "约 0.0884", "\\frac{1}{\\sqrt{128}}", "128^{-1/2}", "0.08839"],
        ["0.088", "1/128", "√128", "0.0883", "0.0885", "128⁻¹", "2⁻³"],
    ),
    "l16-masking-visible-not-weights": (
        ["0.881", "e^2/(e^2+1)", "88.1%", "e²/(e² + 1)", "e^{2}/(e^{2}+1)", "约 0.881"],
        ["0.047", "0.5", "1", "e/(e+1)"],
    ),
    "l16-temp-numeric-sharp": (
        ["0.881", "e²/(e² + 1)", "e^2/(e^2 + 1)", "0.881 左右"],
        ["0.731", "e/(e+1)", "0.5"],
    ),
    "l16-scaling-variance-d64": (
        ["64", "8²", "2⁶", "约 64", "大约64", "64 左右", "六十四", "8^2"],
        ["82", "26", "8", "六十", "4096"],
    ),
    "l16-scaling-std-d64": (
        ["8", "√64", "64^½", "64^{1/2}", "约 8", "大约8", "8 左右", "八", "2³"],
        ["64", "32", "0.125", "23", "六十四"],
    ),
    "l16-hand-lesson-exp": (
        ["2.028", "e^0.7071", "e⁰·⁷⁰⁷¹", "e^{1/√2}", "e^(1/√2)", "exp(1/√2)"],
        ["0.670", "0.7071", "2.718", "e"],
    ),
    "l16-shapes-weight-count": (
        ["35", "5x7", "5 x 7", "5×7", "三十五", "35 个"],
        ["12", "25", "49", "5x5"],
    ),
    "l16-scores-new-example": (
        ["4.243", "约 4.243", "4.243 左右", "6/√2", "3√2"],
        ["6", "4.24", "3"],
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def real_bank() -> bank.Bank:
    return bank.load()


@pytest.mark.parametrize(
    ("question_id", "typed", "right"),
    [
        (question_id, typed, right)
        for question_id, (accepted, misses) in NUMERIC_TABLE.items()
        for typed, right in [(a, True) for a in accepted] + [(m, False) for m in misses]
    ],
)
def test_numeric_items_read_a_count_with_its_measure_word(
    real_bank, question_id, typed, right
):
    """Is "15 个" fifteen, an expression its value, and a near-miss still wrong?"""
    result = check_answer(real_bank.questions[question_id], typed)
    assert result.correct is right, (question_id, typed, result.detail)
    assert "invalid" not in result.detail


def test_every_cloze_question_has_a_row_in_the_table(real_bank):
    """Does a new cloze question get its accepted answers and near-misses listed?"""
    cloze = {q.id for q in real_bank.questions.values() if q.type == "cloze"}
    assert cloze == set(CLOZE_TABLE)
    assert all(misses for _, misses in CLOZE_TABLE.values())


CASES = [
    (question_id, typed, right)
    for question_id, (accepted, misses) in CLOZE_TABLE.items()
    for typed, right in [(a, True) for a in accepted] + [(m, False) for m in misses]
]


@pytest.mark.parametrize(("question_id", "typed", "right"), CASES)
def test_right_spellings_pass_and_near_misses_fail(
    real_bank, question_id, typed, right
):
    """Is each way of writing the answer accepted, and each near-miss refused?"""
    result = check_answer(real_bank.questions[question_id], typed)
    assert result.correct is right, (question_id, typed, result.detail)
    assert "invalid" not in result.detail


@pytest.mark.parametrize("question_id", sorted(CLOZE_TABLE))
def test_a_near_miss_never_folds_onto_an_accepted_answer(real_bank, question_id):
    """Do the accepted answers and the near-misses stay apart after folding?"""
    question = real_bank.questions[question_id]
    accepted = {canonical_answer(a) for a in question.data["accepted"]}
    _, misses = CLOZE_TABLE[question_id]
    assert not accepted & {canonical_answer(m) for m in misses}


SYMBOLS = st.sampled_from(["K", "Q", "V", "Tk", "Tq", "d", "dv", "head_dim", "M"])


@settings(max_examples=200, deadline=None)
@given(symbol=SYMBOLS, transpose=st.sampled_from(["ᵀ", "^T", ".T", "T", "^{T}"]))
def test_every_transpose_spelling_is_one_answer(symbol, transpose):
    """Are Kᵀ, K^T, K.T, KT and K^{T} one answer for any symbol?"""
    assert canonical_answer(symbol + transpose) == canonical_answer(symbol + "ᵀ")


@settings(max_examples=200, deadline=None)
@given(
    dims=st.lists(SYMBOLS, min_size=2, max_size=4),
    style=st.sampled_from(["[{}]", "({})", "{}"]),
    comma=st.sampled_from([",", ", ", "，"]),
)
def test_a_shape_with_or_without_brackets_is_one_answer(dims, style, comma):
    """Is a shape the same with brackets, parentheses or none, and × or *?"""
    listed = canonical_answer(style.format(comma.join(dims)))
    assert (
        listed == canonical_answer(" × ".join(dims)) == canonical_answer("*".join(dims))
    )
    if dims != dims[::-1]:
        assert listed != canonical_answer("[" + ", ".join(reversed(dims)) + "]")


@settings(max_examples=200, deadline=None)
@given(
    numerator=st.integers(-50, 50),
    denominator=st.integers(1, 50),
    decimals=st.integers(0, 3),
)
def test_a_number_is_one_answer_however_it_is_written(numerator, denominator, decimals):
    """Do a fraction and its exact decimal (with trailing zeros) fold alike?"""
    value = numerator / denominator
    as_fraction = canonical_answer(f"{numerator}/{denominator}")
    if value == round(value, 6):
        written = f"{value:.6f}" + "0" * decimals
        assert canonical_answer(written) == as_fraction
    assert canonical_answer(f"{numerator + 1}/{denominator}") != as_fraction


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=30))
def test_folding_is_idempotent(text):
    """Does folding an already folded answer change nothing?"""
    once = canonical_answer(text)
    assert canonical_answer(once) == once


@settings(max_examples=100, deadline=None)
@given(
    question_id=st.sampled_from(sorted(CLOZE_TABLE)),
    padding=st.sampled_from(["", " ", "  ", "\u3000"]),
    case=st.sampled_from([str.upper, str.lower, str]),
)
def test_a_key_accepts_itself_in_any_case_and_padding(question_id, padding, case):
    """Does every accepted answer still pass when upper-cased, lower-cased or padded?"""
    question = bank.load().questions[question_id]
    for accepted in question.data["accepted"]:
        typed = padding + case(accepted) + padding
        assert check_answer(question, typed).correct, typed


@pytest.mark.parametrize("spelling", CLOZE_TABLE["l16-masking-value"][0])
def test_cloze_and_matrix_answers_read_minus_infinity_alike(spelling):
    """Is every −∞ a cloze accepts also −∞ in a typed matrix entry?"""
    from quizsvc.parsing import parse_value

    assert parse_value(spelling) == float("-inf")
    assert canonical_answer(spelling) == "-inf"

"""What a class's record says, for its teachers' dashboard and the class API.

One module per dashboard tab (overview, misconceptions, items, explanations,
calibration, the per-learner page), over two shared ones: `common` (the
period a report covers, the class's learners) and `recall` (predicted recall
of the class's cards, the learners × skills heatmap). Every name stays
importable from `quizsvc.services.class_reports`.

Every report runs a fixed number of set-based queries over the class's
learners (GROUP BY learner, skill, item or misconception; window functions
where a "latest" or a median is needed), never one query per learner, so a
class of 200 learners costs the same handful of statements as one of two.
Recall (RECALL_HORIZON_DAYS ahead, as learners see it) comes from the vectorized
retrievability over all their cards.

Reports that look back (accuracy, misconceptions, items, explanations) take a
`Period`: whole days in the class's time zone, both ends optional.
"""

from quizsvc.services.class_reports.calibration import (
    CalibrationCell,
    CalibrationReport,
    class_calibration,
)
from quizsvc.services.class_reports.common import (
    EARLIEST_DAY,
    LATEST_DAY,
    Period,
    class_learner_ids,
    epoch_seconds,
    parse_period,
)
from quizsvc.services.class_reports.explanations import (
    EXPLANATIONS_SHOWN,
    ExplanationEntry,
    class_explanations,
    count_explanations,
    group_by_item,
)
from quizsvc.services.class_reports.items import ItemReport, class_items
from quizsvc.services.class_reports.learner import (
    RECENT_REVIEWS_SHOWN,
    ReviewLine,
    recent_reviews,
)
from quizsvc.services.class_reports.misconceptions import (
    MISCONCEPTION_EXAMPLES,
    MisconceptionExample,
    MisconceptionReport,
    class_misconceptions,
)
from quizsvc.services.class_reports.overview import (
    SORT_KEYS,
    LearnerRow,
    Overview,
    class_overview,
    sort_rows,
)
from quizsvc.services.class_reports.recall import (
    CardRecall,
    SkillHeatmap,
    class_recall,
    skill_heatmap,
    skills_in_order,
)
from quizsvc.services.streaks import DEFAULT_ROLLOVER_HOUR, STREAK_WINDOW_DAYS

__all__ = [
    "DEFAULT_ROLLOVER_HOUR",
    "EARLIEST_DAY",
    "EXPLANATIONS_SHOWN",
    "LATEST_DAY",
    "MISCONCEPTION_EXAMPLES",
    "RECENT_REVIEWS_SHOWN",
    "SORT_KEYS",
    "STREAK_WINDOW_DAYS",
    "CalibrationCell",
    "CalibrationReport",
    "CardRecall",
    "ExplanationEntry",
    "ItemReport",
    "LearnerRow",
    "MisconceptionExample",
    "MisconceptionReport",
    "Overview",
    "Period",
    "ReviewLine",
    "SkillHeatmap",
    "class_calibration",
    "class_explanations",
    "count_explanations",
    "class_items",
    "class_learner_ids",
    "class_misconceptions",
    "class_overview",
    "class_recall",
    "epoch_seconds",
    "group_by_item",
    "parse_period",
    "recent_reviews",
    "skill_heatmap",
    "skills_in_order",
    "sort_rows",
]

"""What a person sees of the grades: the grades page on the metrics endpoint, and log lines about failing runs.

Both are consumers of the exporter's grades, beside the configured sinks.
"""

from otelgrade.export.ui.pages import add_grade_pages, page_address
from otelgrade.export.ui.runlog import RunLog
from otelgrade.export.ui.store import RunStore

__all__ = ["RunLog", "RunStore", "add_grade_pages", "page_address"]

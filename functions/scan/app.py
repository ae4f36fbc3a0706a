"""ScanFunction: the EventBridge rate(5 minutes) scan. The event's `time` is the scan's "now"."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.automation.offline_extraction import plan
from skillcore.automation.runner import AutomationRunner
from skillcore.background.worker import Worker
from skillcore.db.dynamo import make_db
from skillcore.model.factory import make_model
from skillcore.observability import logger, metrics
from skillcore.scan import run_scan, scan_time
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS

settings = Settings.from_env()
db = make_db(settings)
worker = Worker(db, SKILLS.background, batch_size=settings.scan_batch_size)
# Automation runs may think longer than a chat turn: the scan has minutes, not API Gateway's 29 s.
automations = AutomationRunner(db, SKILLS, make_model(settings, read_timeout=60.0, tool_planner=plan),
                               batch_size=settings.scan_batch_size)

init_phase.end()


# The scheduled event's `id` correlates every line of one scan.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.EVENT_BRIDGE, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    summary = run_scan(worker, automations, scan_time(event), context.get_remaining_time_in_millis)
    logger.info("scan finished", extra=summary)
    return summary

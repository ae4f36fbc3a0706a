"""ScanFunction: the EventBridge rate(5 minutes) scan. The event's `time` is the scan's "now"."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.background.worker import Worker
from skillcore.db.dynamo import make_db
from skillcore.observability import logger
from skillcore.scan import run_scan, scan_time
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS

settings = Settings.from_env()
db = make_db(settings)
worker = Worker(db, SKILLS.background, batch_size=settings.scan_batch_size)


@logger.inject_lambda_context(log_event=False, clear_state=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    summary = run_scan(worker, scan_time(event), context.get_remaining_time_in_millis)
    logger.info("scan finished", extra=summary)
    return summary

"""ScanFunction: the EventBridge rate(5 minutes) scan. The event's `time` is the scan's "now"."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.observability import logger
from skillcore.scan import empty_summary, scan_time


@logger.inject_lambda_context(log_event=False)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    now = scan_time(event)
    summary = empty_summary()
    logger.info("scan finished", extra={"scan_time": now.isoformat(), **summary})
    return summary

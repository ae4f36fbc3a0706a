"""ScanFunction: the EventBridge rate(5 minutes) scan. The event's `time` is the scan's "now".

It only dispatches (skillcore/work/dispatch.py): one SQS message per shard with due work; WorkerFunction runs
them. Its cost is a few Queries per shard, whatever the backlog."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore import bootstrap
from skillcore.observability import logger, metrics
from skillcore.work.scan import dispatch_scan, scan_time

scan = bootstrap.scan()
db, queue, probes = scan.root.db, scan.root.work_queue, scan.probes

init_phase.end()


# The scheduled event's `id` correlates every line of one scan.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.EVENT_BRIDGE, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    summary = dispatch_scan(db, probes, queue, scan_time(event))
    logger.info("scan dispatched", extra=summary)
    return summary

"""ScanFunction: the EventBridge rate(5 minutes) scan. The event's `time` is the scan's "now".

It only dispatches (skillcore/work/dispatch.py): one SQS message per shard with due work; WorkerFunction runs
them. Its cost is a few Queries per shard, whatever the backlog. It also evaluates the running canaries of
installed skills (skillcore/packages/rollout.py): one Query, and a few reads per canary."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore import bootstrap
from skillcore.observability import logger, metrics
from skillcore.work.scan import dispatch_scan, scan_time

scan = bootstrap.scan()
db, queue, probes, rollouts = scan.root.db, scan.root.work_queue, scan.probes, scan.rollouts

init_phase.end()


# The scheduled event's `id` correlates every line of one scan.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.EVENT_BRIDGE, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    now = scan_time(event)
    summary: dict = dict(dispatch_scan(db, probes, queue, now))
    if rollouts is not None:
        try:
            summary["rollouts"] = rollouts(now)
        except Exception:  # noqa: BLE001 - a failed evaluation waits for the next scan; dispatching is done
            logger.exception("canary evaluation failed")
    logger.info("scan dispatched", extra=summary)
    return summary

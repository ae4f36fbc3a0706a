"""WorkerFunction: the SQS event source's batches of shard tasks (skillcore/work/dispatch.py), each worked with
the conditional claims of background/worker.py and automation/runner.py. A record that fails (a poison body,
a crash) is reported in `batchItemFailures` and only it is delivered again; after the queue's
maxReceiveCount it moves to the dead-letter queue, and the others are never held up by it."""

from collections.abc import Mapping
from typing import Any

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore import bootstrap
from skillcore.observability import logger, metrics
from skillcore.work.batch import partial_batch

# A shard's items run settings.worker_concurrency at once (skillcore/work/fanout.py), each behind its own claim;
# automation runs' model calls share a rate (skillcore/bootstrap.py's automation_model).
root, work = bootstrap.worker()
db = root.db  # the function's DynamoDB client (the local stack guards it with the function's IAM policy)

init_phase.end()


@logger.inject_lambda_context(log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    summary = work.new_summary()

    def record_handler(record: Mapping[str, Any]) -> None:
        # A record without its body or SentTimestamp fails (KeyError), as Powertools' SQSRecord made it fail.
        work.handle(record["body"], record["attributes"]["SentTimestamp"], context.get_remaining_time_in_millis,
                    summary)

    # Not Powertools' batch utility: importing it cost the cold start about 17 ms (skillcore/work/batch.py).
    # A batch whose every record failed is answered like any other (all listed), not raised: the invocation
    # itself did not fail, and its summary still counts.
    response = partial_batch(event, record_handler)
    logger.info("shard work finished", extra=summary)
    # The event source mapping reads only `batchItemFailures`; the summary is for the local stack's drain.
    return {**response, "summary": summary}

"""WorkerFunction: the SQS event source's batches of shard tasks (skillcore/work/dispatch.py), each worked with
the conditional claims of background/worker.py and automation/runner.py. A record that fails (a poison body,
a crash) is reported in `batchItemFailures` and only it is delivered again; after the queue's
maxReceiveCount it moves to the dead-letter queue, and the others are never held up by it."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.automation.offline_extraction import plan
from skillcore.automation.runner import AutomationRunner
from skillcore.automation.throttle import throttled
from skillcore.background.worker import Worker
from skillcore.db.dynamo import make_db
from skillcore.model.factory import make_model
from skillcore.observability import logger, metrics
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS
from skillcore.work.scan import ShardWork
from skillcore.work.sqs_queue import make_work_queue

settings = Settings.from_env()
db = make_db(settings)
# Automation runs may think longer than a chat turn: a worker has minutes, not API Gateway's 29 s. Their
# model calls share a rate (settings.model_calls_per_minute) so a burst stays within the Bedrock quota.
# A shard's items run settings.worker_concurrency at once (skillcore/work/fanout.py), each behind its own claim.
model = throttled(make_model(settings, read_timeout=60.0, tool_planner=plan), settings)
work = ShardWork(
    (Worker(db, SKILLS.background, batch_size=settings.scan_batch_size, concurrency=settings.worker_concurrency),
     AutomationRunner(db, SKILLS, model, batch_size=settings.scan_batch_size, concurrency=settings.worker_concurrency)),
    make_work_queue(settings.work_queue_url, settings.region),
    max_age_seconds=settings.work_max_age_seconds,
)

init_phase.end()


@logger.inject_lambda_context(log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    summary = work.new_summary()

    def record_handler(record: SQSRecord) -> None:
        work.handle(record.body, record.attributes.sent_timestamp, context.get_remaining_time_in_millis, summary)

    # A processor per invocation: it keeps the batch's records (the local stack runs invocations on threads).
    # A batch whose every record failed is answered like any other (all listed), not raised: the invocation
    # itself did not fail, and its summary still counts.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    response = process_partial_response(event=event, record_handler=record_handler, processor=processor,
                                        context=context)
    logger.info("shard work finished", extra=summary)
    # The event source mapping reads only `batchItemFailures`; the summary is for the local stack's drain.
    return {**response, "summary": summary}

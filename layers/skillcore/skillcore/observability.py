"""Logger, Tracer and Metrics, configured once. Tracer never captures responses: they may hold private text.

Log lines carry ids and codes only (skill_id, job_id, error codes): never message, memory or note text.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger

logger = Logger(service="skillcore")

"""Stack tests: DynamoDB Local and the local gateway, over real HTTP. The fixtures and the client live in
tests/local_stack.py (shared with the browser and harness lanes); the names are here too for the tests that
import them from this package."""

from tests.local_stack import (  # noqa: F401
    DIRECT_TABLE_PREFIX,
    JWT_SECRET,
    Caller,
    LocalTables,
    PersonAndHost,
    RawResponse,
    StackClient,
)

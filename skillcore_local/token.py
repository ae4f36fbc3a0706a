"""`python -m skillcore_local.token USER [--admin] [--kind person|host] [--ttl SECONDS]`: print one local bearer token.

The token is signed with $SKILLS_LOCAL_JWT_SECRET, the same secret `make dev` reads, so a token printed
here works against a running local stack:  curl -H "Authorization: Bearer $(make -s token USER=alice)" ...
"""

from __future__ import annotations

import argparse
import sys

from skillcore_local.jwt_local import DEFAULT_TTL_SECONDS, KINDS, issue_token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m skillcore_local.token", description=__doc__.splitlines()[0]
    )
    parser.add_argument("user", help="the token's sub: the user id every request acts as")
    parser.add_argument("--admin", action="store_true", help="add the admin group (operator routes)")
    parser.add_argument("--kind", choices=KINDS, default="person",
                        help="a person's token (the page's sign-in, the default) or an agent host's (the MCP face)")
    parser.add_argument(
        "--ttl",
        type=int,
        default=DEFAULT_TTL_SECONDS,
        metavar="SECONDS",
        help="lifetime (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if not args.user.strip():
        parser.error("USER must not be empty")
    if args.ttl <= 0:
        parser.error("--ttl must be positive")
    print(issue_token(args.user, admin=args.admin, kind=args.kind, ttl_seconds=args.ttl))
    return 0


if __name__ == "__main__":
    sys.exit(main())

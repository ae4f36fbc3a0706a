"""`python -m scripts.publish_page [--stack NAME] [--region REGION]` (run by `make deploy` after `sam deploy`):
publish the Skills page of `web/` to the stack's bucket and CloudFront distribution.

1. The app client's callback URL needs the distribution's domain, which the template cannot take from the
   distribution itself (a dependency cycle, see UserPoolClient in template.yaml): when the stack's PageDomain
   parameter is not yet the DistributionDomainName output, the stack is updated once, with its previous
   template and parameters and PageDomain set (`ensure_page_domain`).
2. The page is assembled into a folder (`assemble`, pure: the files of web/ but vendor.json, the modules
   web/vendor.json names copied from node_modules into vendor/, and a config.json for the Cognito sign-in
   built from the stack's outputs), uploaded under `skills/` with its content types and Cache-Control, objects
   no longer in it are deleted (`upload`), and `/skills/*` is invalidated (`invalidate`).

`--out DIR` only assembles the folder (no AWS call but reading the stack's outputs, unless `--config` is given).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillcore_local.page import CONTENT_TYPES, NODE_MODULES, WEB_ROOT, vendor_files
from skillcore_local.template import ROOT

PREFIX = "skills/"
# The file names carry no content hash, so a browser must revalidate them (an ETag makes that a 304): a
# cached app.js next to a new section module would break the page. The vendor modules change only with
# package-lock.json; an hour of staleness after an upgrade is acceptable for them.
NO_CACHE = "no-cache"
VENDOR_CACHE = "public, max-age=3600"
INVALIDATION_PATHS = ["/skills/*"]
SKIPPED = {"vendor.json"}


def cognito_config(outputs: dict[str, str]) -> dict[str, Any]:
    """The page's config.json for the managed login, from the stack's outputs."""
    missing = [key for key in ("CognitoDomain", "UserPoolClientId", "PageUrl") if not outputs.get(key)]
    if missing:
        raise ValueError(
            "the stack has no " + ", ".join(missing) + " output: the page signs in with this stack's Cognito "
            "user pool (JwtIssuer empty)"
        )
    page_url = outputs["PageUrl"]
    return {
        "auth": {
            "type": "cognito",
            "domain": outputs["CognitoDomain"],
            "clientId": outputs["UserPoolClientId"],
            "redirectUri": page_url,
            "logoutUri": page_url,
        }
    }


def cache_control(name: str) -> str:
    return VENDOR_CACHE if name.startswith("vendor/") else NO_CACHE


def content_type(name: str) -> str:
    suffix = Path(name).suffix
    if suffix not in CONTENT_TYPES:
        raise ValueError(f"{name}: no content type for {suffix!r} files (add it to skillcore_local.page)")
    return CONTENT_TYPES[suffix]


def assemble(web_root: Path, node_modules: Path, config: dict[str, Any], out: Path) -> list[str]:
    """Writes the page into `out` (which must be empty or absent); returns its files' names, sorted."""
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty")
    names: list[str] = []
    for source in sorted(web_root.rglob("*")):
        name = source.relative_to(web_root).as_posix()
        if source.is_dir() or name in SKIPPED or any(part.startswith(".") for part in name.split("/")):
            continue
        if name == "config.json" or name.startswith("vendor/"):
            raise ValueError(f"web/{name} would be overwritten by the publisher")
        content_type(name)
        _copy(source, out / name)
        names.append(name)
    for url_name, module in vendor_files(web_root).items():
        source = node_modules / module
        if not source.is_file():
            raise FileNotFoundError(f"{source}: the page's npm modules are not installed (run `make node`)")
        name = f"vendor/{url_name}"
        content_type(name)
        _copy(source, out / name)
        names.append(name)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    names.append("config.json")
    return sorted(names)


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


@dataclass(frozen=True)
class Published:
    uploaded: list[str]
    deleted: list[str]


def upload(s3: Any, bucket: str, folder: Path, prefix: str = PREFIX) -> Published:
    """Puts every file of `folder` under `prefix`, then deletes the keys under `prefix` it no longer has."""
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    existing: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        existing.update(item["Key"] for item in page.get("Contents", []))
    for name in names:
        s3.put_object(
            Bucket=bucket,
            Key=prefix + name,
            Body=(folder / name).read_bytes(),
            ContentType=content_type(name),
            CacheControl=cache_control(name),
        )
    # After the uploads: a page being loaded meanwhile finds either the old files or the new ones.
    stale = sorted(existing - {prefix + name for name in names})
    for start in range(0, len(stale), 1000):
        batch = stale[start : start + 1000]
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key} for key in batch], "Quiet": True})
    return Published(uploaded=[prefix + name for name in names], deleted=stale)


def invalidate(cloudfront: Any, distribution_id: str) -> str:
    response = cloudfront.create_invalidation(
        DistributionId=distribution_id,
        InvalidationBatch={
            "Paths": {"Quantity": len(INVALIDATION_PATHS), "Items": INVALIDATION_PATHS},
            "CallerReference": f"publish-page-{time.time_ns()}",
        },
    )
    return str(response["Invalidation"]["Id"])


def stack_outputs(stack: dict[str, Any]) -> dict[str, str]:
    return {item["OutputKey"]: item["OutputValue"] for item in stack.get("Outputs", [])}


def ensure_page_domain(cloudformation: Any, stack_name: str) -> dict[str, str]:
    """The stack's outputs, after the one-time update that sets PageDomain when it is not yet the
    distribution's domain (the first deploy). Only with this stack's Cognito pool: otherwise nothing to set."""
    stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    outputs = stack_outputs(stack)
    parameters = {
        item["ParameterKey"]: item.get("ParameterValue", "") for item in stack.get("Parameters", [])
    }
    domain = outputs.get("DistributionDomainName", "")
    if "CognitoDomain" not in outputs or not domain or parameters.get("PageDomain") == domain:
        return outputs
    print(f">> setting PageDomain={domain} (the app client's callback and sign-out URLs)", file=sys.stderr)
    cloudformation.update_stack(
        StackName=stack_name,
        UsePreviousTemplate=True,
        Parameters=[
            {"ParameterKey": key, "ParameterValue": domain}
            if key == "PageDomain"
            else {"ParameterKey": key, "UsePreviousValue": True}
            for key in sorted(set(parameters) | {"PageDomain"})
        ],
        # The template is a SAM template (a transform): CAPABILITY_AUTO_EXPAND, and its functions' roles.
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    cloudformation.get_waiter("stack_update_complete").wait(StackName=stack_name)
    return stack_outputs(cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0])


def samconfig_defaults(path: Path = ROOT / "samconfig.toml") -> tuple[str | None, str | None]:
    """(stack name, region) of samconfig.toml's default environment, the ones `sam deploy` used."""
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    params = config.get("default", {}).get("global", {}).get("parameters", {})
    deploy = config.get("default", {}).get("deploy", {}).get("parameters", {})
    return deploy.get("stack_name") or params.get("stack_name"), deploy.get("region") or params.get("region")


def main(argv: list[str] | None = None) -> int:
    default_stack, default_region = samconfig_defaults()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--stack", default=default_stack, help="stack name (default: samconfig.toml's)")
    parser.add_argument("--region", default=default_region, help="Region (default: samconfig.toml's)")
    parser.add_argument("--out", type=Path, help="only assemble the page into this (empty) folder")
    parser.add_argument("--config", type=Path, help="with --out: this config.json instead of the stack's")
    args = parser.parse_args(argv)

    if args.out and args.config:
        names = assemble(
            WEB_ROOT, NODE_MODULES, json.loads(args.config.read_text(encoding="utf-8")), args.out
        )
        print(f">> {len(names)} files in {args.out}", file=sys.stderr)
        return 0
    if not args.stack:
        parser.error("--stack is required (no stack_name in samconfig.toml)")

    import boto3  # noqa: PLC0415 - only the AWS path needs it

    session = boto3.Session(region_name=args.region)
    if args.out:
        outputs = stack_outputs(
            session.client("cloudformation").describe_stacks(StackName=args.stack)["Stacks"][0]
        )
        names = assemble(WEB_ROOT, NODE_MODULES, cognito_config(outputs), args.out)
        print(f">> {len(names)} files in {args.out}", file=sys.stderr)
        return 0
    outputs = ensure_page_domain(session.client("cloudformation"), args.stack)
    config = cognito_config(outputs)
    with tempfile.TemporaryDirectory(prefix="skills-page-") as tmp:
        folder = Path(tmp) / "page"
        assemble(WEB_ROOT, NODE_MODULES, config, folder)
        published = upload(session.client("s3"), outputs["PageBucketName"], folder)
    invalidation = invalidate(session.client("cloudfront"), outputs["DistributionId"])
    print(
        f">> {len(published.uploaded)} files uploaded, {len(published.deleted)} stale deleted, "
        f"invalidation {invalidation}\n>> the page: {outputs['PageUrl']}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

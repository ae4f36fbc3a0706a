"""scripts/publish_page.py: the assembled folder, the upload (moto's S3 and CloudFront) and the PageDomain pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from scripts.publish_page import (
    NO_CACHE,
    VENDOR_CACHE,
    assemble,
    cognito_config,
    ensure_page_domain,
    invalidate,
    upload,
)
from skillcore_local.page import NODE_MODULES, WEB_ROOT, vendor_files

OUTPUTS = {
    "CognitoDomain": "https://skillcore-dev-123456789012.auth.us-east-1.amazoncognito.com",
    "UserPoolClientId": "client123",
    "PageUrl": "https://d111111abcdef8.cloudfront.net/skills/",
    "DistributionDomainName": "d111111abcdef8.cloudfront.net",
    "PageBucketName": "page-bucket",
    "DistributionId": "E123",
}


def web_files() -> list[str]:
    return sorted(
        p.relative_to(WEB_ROOT).as_posix()
        for p in WEB_ROOT.rglob("*")
        if p.is_file() and p.name != "vendor.json"
    )


def test_the_folder_holds_web_the_vendor_modules_and_the_config(tmp_path: Path) -> None:
    out = tmp_path / "page"
    names = assemble(WEB_ROOT, NODE_MODULES, cognito_config(OUTPUTS), out)
    vendor = {f"vendor/{name}": module for name, module in vendor_files().items()}
    assert vendor, "web/vendor.json names no module"
    expected = sorted([*web_files(), *vendor, "config.json"])
    assert names == expected
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == expected
    for name in web_files():
        assert (out / name).read_bytes() == (WEB_ROOT / name).read_bytes()
    for name, module in vendor.items():
        assert (out / name).read_bytes() == (NODE_MODULES / module).read_bytes()
    assert json.loads((out / "config.json").read_text()) == {
        "auth": {
            "type": "cognito",
            "domain": OUTPUTS["CognitoDomain"],
            "clientId": "client123",
            "redirectUri": "https://d111111abcdef8.cloudfront.net/skills/",
            "logoutUri": "https://d111111abcdef8.cloudfront.net/skills/",
        }
    }


def test_assembling_refuses_a_missing_module_an_unknown_type_and_a_full_folder(tmp_path: Path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!DOCTYPE html>")
    (web / "vendor.json").write_text(json.dumps({"_why": "x", "a.js": "pkg/a.js"}))
    modules = tmp_path / "node_modules"
    with pytest.raises(FileNotFoundError, match="make node"):
        assemble(web, modules, {}, tmp_path / "out1")
    (modules / "pkg").mkdir(parents=True)
    (modules / "pkg" / "a.js").write_text("export {};")
    assert assemble(web, modules, {}, tmp_path / "out2") == ["config.json", "index.html", "vendor/a.js"]
    with pytest.raises(ValueError, match="not empty"):
        assemble(web, modules, {}, tmp_path / "out2")
    (web / "font.woff2").write_bytes(b"\0")
    with pytest.raises(ValueError, match="no content type"):
        assemble(web, modules, {}, tmp_path / "out3")


def test_a_stack_without_its_own_pool_has_no_config() -> None:
    with pytest.raises(ValueError, match="CognitoDomain"):
        cognito_config({k: v for k, v in OUTPUTS.items() if k != "CognitoDomain"})


@mock_aws
def test_upload_sets_types_and_cache_control_and_deletes_stale_objects(tmp_path: Path) -> None:
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="page-bucket")
    s3.put_object(Bucket="page-bucket", Key="skills/sections/gone.js", Body=b"old")
    s3.put_object(Bucket="page-bucket", Key="skills/index.html", Body=b"old")
    s3.put_object(Bucket="page-bucket", Key="elsewhere/keep.txt", Body=b"not the page's")
    folder = tmp_path / "page"
    assemble(WEB_ROOT, NODE_MODULES, cognito_config(OUTPUTS), folder)

    published = upload(s3, "page-bucket", folder)

    assert published.deleted == ["skills/sections/gone.js"]
    keys = sorted(item["Key"] for item in s3.list_objects_v2(Bucket="page-bucket")["Contents"])
    assert keys == sorted(["elsewhere/keep.txt", *published.uploaded])

    def head(key: str) -> dict[str, Any]:
        return s3.head_object(Bucket="page-bucket", Key=key)

    assert head("skills/index.html")["ContentType"] == "text/html; charset=utf-8"
    assert head("skills/index.html")["CacheControl"] == NO_CACHE
    assert head("skills/config.json")["ContentType"] == "application/json; charset=utf-8"
    assert head("skills/config.json")["CacheControl"] == NO_CACHE
    assert head("skills/app.js")["ContentType"] == "text/javascript; charset=utf-8"
    assert head("skills/styles.css")["ContentType"] == "text/css; charset=utf-8"
    vendor = next(key for key in published.uploaded if key.startswith("skills/vendor/"))
    assert head(vendor)["ContentType"] == "text/javascript; charset=utf-8"
    assert head(vendor)["CacheControl"] == VENDOR_CACHE
    body = s3.get_object(Bucket="page-bucket", Key="skills/index.html")["Body"].read()
    assert body == (WEB_ROOT / "index.html").read_bytes()


@mock_aws
def test_invalidation_covers_the_page() -> None:
    cloudfront = boto3.client("cloudfront", region_name="us-east-1")
    distribution = cloudfront.create_distribution(
        DistributionConfig={
            "CallerReference": "test",
            "Comment": "",
            "Enabled": True,
            "Origins": {
                "Quantity": 1,
                "Items": [
                    {
                        "Id": "page",
                        "DomainName": "page-bucket.s3.amazonaws.com",
                        "S3OriginConfig": {"OriginAccessIdentity": ""},
                    }
                ],
            },
            "DefaultCacheBehavior": {"TargetOriginId": "page", "ViewerProtocolPolicy": "redirect-to-https"},
        }
    )["Distribution"]["Id"]
    invalidation_id = invalidate(cloudfront, distribution)
    found = cloudfront.get_invalidation(DistributionId=distribution, Id=invalidation_id)["Invalidation"]
    assert found["InvalidationBatch"]["Paths"]["Items"] == ["/skills/*"]


class FakeCloudFormation:
    def __init__(self, page_domain: str, outputs: dict[str, str]) -> None:
        self.parameters = {"Stage": "dev", "PageDomain": page_domain}
        self.outputs = outputs
        self.updates: list[dict[str, Any]] = []
        self.waited: list[str] = []

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 - boto3's name
        return {
            "Stacks": [
                {
                    "Parameters": [
                        {"ParameterKey": k, "ParameterValue": v} for k, v in self.parameters.items()
                    ],
                    "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in self.outputs.items()],
                }
            ]
        }

    def update_stack(self, **kwargs: Any) -> None:
        self.updates.append(kwargs)
        for item in kwargs["Parameters"]:
            if "ParameterValue" in item:
                self.parameters[item["ParameterKey"]] = item["ParameterValue"]

    def get_waiter(self, name: str) -> Any:
        fake = self

        class Waiter:
            def wait(self, StackName: str) -> None:  # noqa: N803 - boto3's name
                fake.waited.append(name)

        return Waiter()


def test_the_first_publish_sets_page_domain_once_with_the_previous_template() -> None:
    cloudformation = FakeCloudFormation("", OUTPUTS)
    assert ensure_page_domain(cloudformation, "skillcore-dev") == OUTPUTS
    assert len(cloudformation.updates) == 1
    update = cloudformation.updates[0]
    assert update["UsePreviousTemplate"] is True
    assert update["Parameters"] == [
        {"ParameterKey": "PageDomain", "ParameterValue": "d111111abcdef8.cloudfront.net"},
        {"ParameterKey": "Stage", "UsePreviousValue": True},
    ]
    assert "CAPABILITY_AUTO_EXPAND" in update["Capabilities"]
    assert cloudformation.waited == ["stack_update_complete"]
    # The next publish finds it set and updates nothing.
    ensure_page_domain(cloudformation, "skillcore-dev")
    assert len(cloudformation.updates) == 1


def test_an_external_issuer_needs_no_page_domain() -> None:
    outputs = {k: v for k, v in OUTPUTS.items() if k != "CognitoDomain"}
    cloudformation = FakeCloudFormation("", outputs)
    ensure_page_domain(cloudformation, "skillcore-dev")
    assert cloudformation.updates == []

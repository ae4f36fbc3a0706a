"""The S3 adapter of package bytes (`SKILLS_PACKAGE_BUCKET`, template.yaml's PackageBucket): PutObject with the
SHA-256 checksum S3 verifies on upload (`ChecksumSHA256`), GetObject to read. botocore's client, made by
skillcore/db/aws.py; imported only by the catalog's composition, never by a cold start of another route."""

from __future__ import annotations

import base64
from typing import Any

from botocore.exceptions import ClientError

from skillcore.db import aws


class S3Blobs:
    def __init__(self, bucket: str, region: str, client: Any | None = None) -> None:
        self.bucket = bucket
        self.client = client or aws.client("s3", region_name=region)

    def put(self, blob_key: str, data: bytes, checksum: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=blob_key, Body=data, ContentType="application/zip" if blob_key.endswith(".zip") else "application/octet-stream",
                               ChecksumSHA256=base64.b64encode(bytes.fromhex(checksum)).decode("ascii"))

    def get(self, blob_key: str) -> bytes | None:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=blob_key)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        body: bytes = response["Body"].read()
        return body

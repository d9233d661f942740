#!/usr/bin/env python3
"""Test helper for the S3 tests: sets up moto, reads objects back with boto3, and signs
requests with botocore so our SigV4 can be compared with an independent implementation.

  s3_tool.py setup ENDPOINT BUCKET      create bucket + IAM user (s3:*), then turn on moto's
                                        signature checks; prints {"access_key_id", "secret_access_key"}
  s3_tool.py object ENDPOINT AK SK BUCKET KEY   prints {"sha256", "size", "checksum_sha256"}
  s3_tool.py uploads ENDPOINT AK SK BUCKET      prints {"uploads": [upload ids still open]}
  s3_tool.py sign                       stdin {"method","url","headers","access_key_id",
                                        "secret_access_key","session_token","region","amz_date"};
                                        prints {"authorization": "..."} computed by botocore
"""
import hashlib
import json
import sys
import time
import urllib.request


def client(endpoint, ak, sk, service="s3"):
    import boto3
    from botocore.config import Config
    return boto3.client(service, endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                        region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))


def setup(endpoint, bucket):
    deadline = time.time() + 20
    while True:
        try:
            urllib.request.urlopen(endpoint + "/moto-api/", timeout=2).read()
            break
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    # Before auth is on, any key works.
    s3 = client(endpoint, "AKIAIOSFODNN7EXAMPLE", "setup")
    s3.create_bucket(Bucket=bucket)
    iam = client(endpoint, "AKIAIOSFODNN7EXAMPLE", "setup", "iam")
    iam.create_user(UserName="uploader")
    iam.put_user_policy(UserName="uploader", PolicyName="s3", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    key = iam.create_access_key(UserName="uploader")["AccessKey"]
    # From now on moto checks every request's signature (and the key's policy).
    request = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
                                     headers={"Content-Type": "text/plain"})
    urllib.request.urlopen(request, timeout=5).read()
    print(json.dumps({"access_key_id": key["AccessKeyId"], "secret_access_key": key["SecretAccessKey"]}))


def get_object(endpoint, ak, sk, bucket, key):
    obj = client(endpoint, ak, sk).get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    body = obj["Body"].read()
    print(json.dumps({"sha256": hashlib.sha256(body).hexdigest(), "size": len(body),
                      "checksum_sha256": obj.get("ChecksumSHA256")}))


def uploads(endpoint, ak, sk, bucket):
    listing = client(endpoint, ak, sk).list_multipart_uploads(Bucket=bucket)
    print(json.dumps({"uploads": [u["UploadId"] for u in listing.get("Uploads", [])]}))


def sign():
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    spec = json.load(sys.stdin)
    request = AWSRequest(method=spec["method"], url=spec["url"], headers=spec["headers"])
    request.context["timestamp"] = spec["amz_date"]
    auth = S3SigV4Auth(Credentials(spec["access_key_id"], spec["secret_access_key"], spec.get("session_token")),
                       "s3", spec["region"])
    canonical = auth.canonical_request(request)
    string_to_sign = auth.string_to_sign(request, canonical)
    signature = auth.signature(string_to_sign, request)
    scope = auth.scope(request)
    signed = auth.signed_headers(auth.headers_to_sign(request))
    print(json.dumps({"authorization": f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders={signed}, Signature={signature}",
                      "canonical_request": canonical}))


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"setup": setup, "object": get_object, "uploads": uploads, "sign": sign}[command](*args)

#!/usr/bin/env python3
"""The GCO console's CDK app. With no AWS account (`python app.py`, or
`npx --yes cdk synth` without credentials) it synthesizes with examples.json
standing in for the parameters not given; with one (`cdk deploy`) it never
reads them, and refuses any value still equal to an example. README.md,
"Run it for your team", lists the parameters."""

import json
import os
import sys
from pathlib import Path

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from gco_console_stack import REPO_ROOT, ConsoleStack
from settings import Settings, SettingsError, example_values_left, examples

# What the Containerfile copies (scripts/image.sh stages it).
STAGED_BINARY = REPO_ROOT / "target" / "image" / "rootfs" / "usr" / "local" / "bin" / "gco-console"


def cli_context() -> dict | None:
    """The context the CDK CLI hands the app (cdk.json's, cdk.context.json's
    and -c's), or None when the app runs alone."""
    if "CDK_CONTEXT_JSON" in os.environ:
        return json.loads(os.environ["CDK_CONTEXT_JSON"])
    if "CONTEXT_OVERFLOW_LOCATION_ENV" in os.environ:
        return json.loads(Path(os.environ["CONTEXT_OVERFLOW_LOCATION_ENV"]).read_text())
    return None


def main() -> None:
    given = cli_context()
    if given is None:
        # Run as `python app.py`: cdk.json's context, as the CLI would pass it.
        given = json.loads((Path(__file__).parent / "cdk.json").read_text())["context"]
    account = os.environ.get("CDK_DEFAULT_ACCOUNT")
    if account:
        left = example_values_left(given)
        if left:
            sys.exit(
                "gco-console stack: these parameters still have example values (examples.json, or the "
                "documentation's example.com and 111122223333): "
                + ", ".join(left)
                + ". Give yours with -c KEY=VALUE (or in cdk.json)."
            )
        context = given
    else:
        # No account, so nothing can be deployed: the examples stand in.
        context = {**examples(), **given}
    app = cdk.App(context=context)
    try:
        settings = Settings.from_context(context)
        if settings.vpc_id and not account:
            raise SettingsError("vpcId needs an AWS account to look the VPC up (credentials, or CDK_DEFAULT_ACCOUNT)")
        if account and not settings.image and not STAGED_BINARY.is_file():
            raise SettingsError(
                f"{STAGED_BINARY} is missing: run scripts/image.sh (or scripts/image.sh --stage-only) first, "
                "or give a pushed image with -c image=REPOSITORY@sha256:DIGEST"
            )
        # The stack lives in the endpoints table's region (GCO's global
        # region), where the console's history table goes too.
        ConsoleStack(
            app,
            context.get("stackName") or "GcoConsole",
            settings=settings,
            env=cdk.Environment(account=account, region=settings.endpoints_table_region),
            description="The GCO console behind an ALB with OIDC sign-in (gco deploy/cdk)",
        )
    except SettingsError as e:
        sys.exit(f"gco-console stack: {e}")
    # cdk-nag's AwsSolutions pack on every synth: a finding the stack does
    # not settle (README lists those it suppresses, and why) is an error
    # that stops `cdk deploy`.
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    app.synth()


if __name__ == "__main__":
    main()

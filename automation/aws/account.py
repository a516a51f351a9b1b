"""Whether kubeshift can talk to the AWS account at all, asked once before a command
reads it resource by resource.

Without it, missing credentials or an endpoint nobody answers come back once per
resource the command looks for (adoption looks for a few hundred). STS
``GetCallerIdentity`` answers for any valid credentials and needs no IAM permission,
so it tells "cannot reach or sign in" apart from everything else, in one sentence.
"""

from __future__ import annotations

from automation.aws.clients import AwsClients
from automation.core.errors import UserError

WHERE_TO_LOOK = (
    "a profile (kubeshift:runtime.aws.profile or AWS_PROFILE) or AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY"
)


def reach_account(clients: AwsClients) -> str:
    """The account id the credentials sign in to; ``UserError`` naming what to check."""
    from botocore.exceptions import (
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
        ReadTimeoutError,
    )

    where = clients.endpoint_url or f"AWS in {clients.region}"
    try:
        return str(clients.client("sts").get_caller_identity()["Account"])
    except (NoCredentialsError, PartialCredentialsError) as exc:
        raise UserError(
            f"No AWS credentials were found ({exc}); set {WHERE_TO_LOOK}, then run again."
        ) from None
    except (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError) as exc:
        raise UserError(
            f"{where} could not be reached ({exc}); check the network, and "
            "kubeshift:runtime.aws.endpoint_url if it names an endpoint."
        ) from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise UserError(
            f"AWS refused kubeshift's credentials ({error.get('Code', '?')}: "
            f"{error.get('Message', '')}); check that {WHERE_TO_LOOK} are current."
        ) from None

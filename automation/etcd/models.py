"""What etcd answers, typed: a member and one member's status.

The gateway renders protobuf as JSON: 64-bit numbers arrive as strings, fields at
their zero value (``isLearner: false``, ``leader: 0``) are left out, and the response
header carries the answering member's and the cluster's IDs.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


def hex_id(member_id: int) -> str:
    """A member ID the way etcdctl prints it (``8e9e05c52164694d``)."""
    return f"{member_id:x}"


class Member(BaseModel):
    """One entry of the member list (``/v3/cluster/member/list``)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    id: int = Field(alias="ID", ge=0)
    name: str = Field(default="", description="Empty until an added member first starts.")
    peer_urls: tuple[str, ...] = Field(default=(), alias="peerURLs")
    client_urls: tuple[str, ...] = Field(default=(), alias="clientURLs")
    is_learner: bool = Field(default=False, alias="isLearner")

    @property
    def label(self) -> str:
        """``name (hexid)``, or just the hex ID for a member that has not started yet."""
        return f"{self.name} ({hex_id(self.id)})" if self.name else hex_id(self.id)


class MemberStatus(BaseModel):
    """One member's own view (``/v3/maintenance/status``), as reported by that member."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    member_id: int = Field(ge=0, description="The answering member (response header).")
    cluster_id: int = Field(ge=0, description="Its cluster (response header).")
    leader: int = Field(default=0, ge=0, description="The leader it follows; 0 = none.")
    raft_index: int = Field(default=0, ge=0, alias="raftIndex")
    raft_applied_index: int = Field(default=0, ge=0, alias="raftAppliedIndex")
    raft_term: int = Field(default=0, ge=0, alias="raftTerm")
    db_size: int = Field(default=0, ge=0, alias="dbSize")
    is_learner: bool = Field(default=False, alias="isLearner")
    version: str = ""
    errors: tuple[str, ...] = Field(default=(), description="Alarms and 'no leader'.")

    @model_validator(mode="before")
    @classmethod
    def _lift_header(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("header"), dict):
            header = data["header"]
            data = {
                **data,
                "member_id": header.get("member_id"),
                "cluster_id": header.get("cluster_id"),
            }
        return data

    @property
    def is_leader(self) -> bool:
        return self.leader != 0 and self.leader == self.member_id

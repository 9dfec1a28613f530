"""What the Pulumi CLI writes, as pydantic models: only the fields the status reads; every
other field is ignored (``extra="ignore"``), so a newer CLI that adds fields still parses.

The formats, read in pulumi/pulumi's source at the CLI version the project pins
(``.pulumi.version``: 3.272.0):

- ``pulumi stack export``: ``apitype.UntypedDeployment`` (``sdk/go/common/apitype/core.go``:
  ``version``, ``features``, ``deployment``) whose ``deployment`` is a ``DeploymentV3``
  (``manifest``, ``secrets_providers``, ``resources``: ``[]ResourceV3``,
  ``pending_operations``) for ``version`` 3 (``DeploymentSchemaVersionCurrent``) and 4
  (``DeploymentSchemaVersionLatest``: the same ``DeploymentV3``, written when the state uses a
  feature that needs it, such as a ``pulumi state taint``; the features it uses are listed in
  ``features``, "only looked at when ``Version`` is 4 or greater"). The CLI refuses a feature
  it does not know (``pkg/resource/stack/deployment.go``, ``supportedFeatures`` and
  ``ErrDeploymentUnsupportedFeatures``), and so does this reader (:data:`FEATURES`); another
  version is refused, as the CLI refuses a newer one.
- ``ResourceV3`` (same file): ``urn``, ``custom``, ``delete``, ``id``, ``type``, ``inputs``,
  ``outputs``, ``parent``, ``provider``, ``pendingReplacement``, ``retainOnDelete``, ...
  A secret value is an object whose key ``4dabf18193072939515e22adb298388d`` (``resource.SigKey``)
  is ``1b47061264138c4ac30d75fd1eb44270`` (``resource.SecretSig``), holding ``ciphertext``;
  in the preview digest the CLI replaces each secret with the string ``[secret]``
  (``pkg/backend/display/json.go`` ``massagePropertyValue``). Neither is ever printed here:
  the status reports property *paths* only.
- ``pulumi preview --json`` and ``pulumi refresh --preview-only --json``: the preview digest
  (``pkg/backend/display/json.go`` ``ShowPreviewDigest``; types ``PreviewDigest``,
  ``PreviewStep``, ``PropertyDiff`` in ``sdk/go/common/display`` (formerly
  ``pkg/display/json.go``): ``steps`` of ``op``, ``urn``, ``provider``, ``oldState`` and
  ``newState`` (``ResourceV3``), ``diffReasons``, ``replaceReasons``, ``detailedDiff``
  (property path → ``{kind, inputDiff}``); ``diagnostics``; ``changeSummary``;
  ``duration``; ``maybeCorrupt``). For a refresh, a step first recorded with op ``refresh``
  is rewritten to the refresh's result when its outputs arrive: ``update`` (with a detailed
  diff: the live object differs) or ``delete`` (the live object is gone); a ``refresh`` step
  that stays is unchanged (``ShowPreviewDigest``, case ``engine.ResourceOutputsEvent``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
"""``resource.SigKey`` (pulumi/pulumi sdk/go/common/resource/properties.go): marks a secret."""
DEPLOYMENT_VERSIONS = (3, 4)
"""``apitype.DeploymentSchemaVersionCurrent`` and ``DeploymentSchemaVersionLatest``."""
FEATURES = frozenset(
    {
        "refreshBeforeUpdate",
        "views",
        "hooks",
        "taint",
        "replaceWith",
        "snippets-prototype",
        "extensionParameterization",
        "byteString",
    }
)
"""The deployment features the CLI reads (pulumi/pulumi ``pkg/resource/stack/deployment.go``
``supportedFeatures``, at 1b5949891b, CLI 3.260). None of them changes the fields read here
(URN, type, parent, inputs, outputs): a tainted resource (``taint``) is only replaced by the
next ``up``; a ``byteString`` value is an output no status rule reads."""

# Step ops (pulumi/pulumi pkg/resource/deploy/step.go, the ``StepOp`` constants and
# ``StepOps``).
OP_SAME = "same"
OP_CREATE = "create"
OP_UPDATE = "update"
OP_DELETE = "delete"
OP_REPLACE = "replace"
OP_CREATE_REPLACEMENT = "create-replacement"
OP_DELETE_REPLACED = "delete-replaced"
OP_READ = "read"
OP_READ_REPLACEMENT = "read-replacement"
OP_REFRESH = "refresh"
OP_READ_DISCARD = "discard"
OP_DISCARD_REPLACED = "discard-replaced"
OP_REMOVE_PENDING_REPLACE = "remove-pending-replace"
OP_IMPORT = "import"
OP_IMPORT_REPLACEMENT = "import-replacement"

UNCHANGED_OPS = frozenset(
    {
        OP_SAME,
        OP_REFRESH,
        OP_READ,
        OP_READ_DISCARD,
        OP_DISCARD_REPLACED,
        OP_REMOVE_PENDING_REPLACE,
    }
)
"""Ops that change no resource: unchanged, a read of an object the program does not manage,
and the engine's own bookkeeping of the state (dropping a read, a replaced or a
pending-replacement entry)."""


class UnreadableError(Exception):
    """A live value the status needs that cannot be read (a certificate's expiry, a
    Deployment's replica count): ``field`` (under the resource) and why. The status reports it
    as bad input naming the file and field (exit 2), never a part silently read as healthy."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def utc(value: datetime) -> datetime:
    """``value`` in UTC (a naive time is UTC); ``ValueError`` for a time whose UTC value falls
    outside the years 1 to 9999 (``9999-12-31T23:59:59-12:00``): it parses, but cannot be
    shown or counted from."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("a time whose UTC value is outside the years 1 to 9999") from None


class Lenient(BaseModel):
    """The CLI's JSON: unknown fields are ignored (apitype's rule 4: new fields are optional)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class ResourceV3(Lenient):
    urn: str
    custom: bool = False
    delete: bool = False
    id: str | None = None
    type: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    parent: str | None = None
    provider: str | None = None
    dependencies: list[str] = Field(default_factory=list)
    pending_replacement: bool = Field(False, alias="pendingReplacement")


class ManifestV1(Lenient):
    """``apitype.ManifestV1`` (pulumi/pulumi ``sdk/go/common/apitype/core.go``): ``time`` is the
    "Time of the update" that wrote the state (a Go ``time.Time``, so RFC 3339 with up to nine
    fraction digits; microseconds are kept), ``DeploymentV3.manifest``. The state's age
    (:mod:`.age`) is counted from it."""

    time: datetime | None = None
    version: str | None = None

    @field_validator("time")
    @classmethod
    def _in_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else utc(value)


class DeploymentV3(Lenient):
    manifest: ManifestV1 | None = None
    resources: list[ResourceV3] = Field(default_factory=list)


class UntypedDeployment(Lenient):
    version: int
    features: list[str] = Field(default_factory=list)
    deployment: DeploymentV3


class PropertyDiff(Lenient):
    kind: str
    input_diff: bool = Field(False, alias="inputDiff")


class PreviewStep(Lenient):
    op: str
    urn: str
    provider: str | None = None
    old_state: ResourceV3 | None = Field(None, alias="oldState")
    new_state: ResourceV3 | None = Field(None, alias="newState")
    diff_reasons: list[str] | None = Field(None, alias="diffReasons")
    replace_reasons: list[str] | None = Field(None, alias="replaceReasons")
    detailed_diff: dict[str, PropertyDiff] | None = Field(None, alias="detailedDiff")

    @property
    def state(self) -> ResourceV3 | None:
        """The state after the step if known, else before it."""
        return self.new_state or self.old_state


class Diagnostic(Lenient):
    urn: str | None = None
    message: str = ""
    severity: str = ""


class PreviewDigest(Lenient):
    steps: list[PreviewStep] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    change_summary: dict[str, int] | None = Field(None, alias="changeSummary")
    maybe_corrupt: bool = Field(False, alias="maybeCorrupt")

    @property
    def is_refresh(self) -> bool:
        """A refresh's digest: its unchanged resources keep the op ``refresh``, and a preview
        never has one (``ShowPreviewDigest``)."""
        return any(step.op == OP_REFRESH for step in self.steps)

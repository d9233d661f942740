/// The transition function and its values (`ProfileCore`, `ProfileEvent`, `ProfileEffect`, …)
/// live in `UploaderDecisions`, a target that may depend on values only; the owner, executor
/// and hooks here carry its decisions out. Re-exported so the layers above see them as before.
@_exported import UploaderDecisions

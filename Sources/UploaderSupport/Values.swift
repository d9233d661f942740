/// The values every layer passes around (paths, timestamps, log levels, manifests) live in
/// `UploaderValues`, below this target, so the core can use them without a file system;
/// re-exported here so each layer above sees them as before.
@_exported import UploaderValues

/// The three directories of a spool a file can sit in: a value here, not in `UploaderSpool`, so
/// the core can say where a settled file goes without seeing the spool's file system.
package enum SpoolArea: String, Sendable { case outbox, sent, retry }

import Foundation
import UploaderSupport
import UploaderConfig

/// The public, secret-free list of profiles that `run` publishes at `[uploader] index`: a
/// producer may not read the config (it names the secrets), yet `status` and `enqueue` need each
/// profile's directories. Names, spool paths, the producers group and what the outbox ignores;
/// never a URL, a credential or a secret path.
package struct ProfileIndex: Codable, Sendable, Equatable {
    /// Where the package's config publishes it, and where `status`/`enqueue` look without `$UPLOADER_INDEX`.
    package static let defaultPath = "/var/lib/uploader/profiles.json"

    package var config: String
    package var profiles: [Entry]

    /// One profile's public part.
    package struct Entry: Codable, Sendable, Equatable {
        package var name: String
        package var spool: String
        package var outbox: String
        package var sent: String
        package var retry: String
        package var producers: String?
        package var recursive: Bool
        package var ignore: [String]
    }

    package init(_ configuration: Configuration) {
        config = configuration.path
        profiles = configuration.profiles.map { p in
            Entry(name: p.name, spool: p.spool.root, outbox: p.spool.outbox, sent: p.spool.sent, retry: p.spool.retry,
                  producers: p.producers, recursive: p.recursive, ignore: p.ignore)
        }
    }

    /// The profiles as `status` and `enqueue` use them: their directories and outbox rules, no destination.
    package var configuration: Configuration {
        let placeholder = Destination.http(URLTemplate(try! Template(parsing: "http://index.invalid/")))
        let built = profiles.map { entry in
            var profile = Profile(name: entry.name, spool: SpoolPaths(root: entry.spool, outbox: entry.outbox, sent: entry.sent,
                                                                      retry: entry.retry), destination: placeholder)
            profile.producers = entry.producers
            profile.recursive = entry.recursive
            profile.ignore = entry.ignore
            return profile
        }
        return Configuration(path: config, global: GlobalSettings(), profiles: built)
    }

    /// Writes the index of `configuration` where its `index` key says (nothing without one), atomically,
    /// mode 0644; a failure is a warning, since the daemon runs on without it.
    package static func publish(_ configuration: Configuration, logger: Logger) {
        guard let path = configuration.global.index else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try FileSystem.writeAtomically(Array(try encoder.encode(ProfileIndex(configuration))) + [0x0A], toPath: path, mode: 0o644)
            logger.debug("profile index written", ["file": path])
        } catch {
            logger.warnOnce(key: "index \(path)", "cannot write the profile index; producers' status and enqueue may see an old one",
                            ["file": path, "error": "\(error)"])
        }
    }

    /// Reads an index; the error is a reason fit for a message (`Permission denied`, `not a profile index`).
    package static func read(_ path: String) -> Result<ProfileIndex, ReadFailure> {
        let handle: FileHandle
        do {
            handle = FileHandle(fileDescriptor: try FileDescriptor.open(path, .readOnly).release(), closeOnDealloc: true)
        } catch let error as SystemError {
            return .failure(ReadFailure(reason: error.code.description))
        } catch {
            return .failure(ReadFailure(reason: "\(error)"))
        }
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            return .failure(ReadFailure(reason: "cannot read it: \(error.localizedDescription)"))
        }
        guard let index = try? JSONDecoder().decode(ProfileIndex.self, from: data) else {
            return .failure(ReadFailure(reason: "not a profile index"))
        }
        return .success(index)
    }

    /// Why an index could not be read.
    package struct ReadFailure: Error {
        package var reason: String
    }
}

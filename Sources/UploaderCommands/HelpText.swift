import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// The `--help` and `help COMMAND` texts: every command and every option.
package enum HelpText {
    package static let overview = """
    uploader \(UploaderVersion.string) — a directory as a durable upload queue

    Usage:
      uploader run [--config PATH] [--profile NAME]... [--once]
      uploader status [--config PATH] [--profile NAME]... [--json]
      uploader retry [--config PATH] [--profile NAME]... (--all | FILE...)
      uploader enqueue [--config PATH] --profile NAME [--move] FILE...
      uploader check-config [--config PATH]
      uploader --version | --help | help COMMAND

    The config is --config, else $UPLOADER_CONFIG, else ./uploader.conf, else
    /etc/uploader/uploader.conf. Exit codes: 0 ok; 1 run --once sent a file to retry/;
    2 usage or configuration error; 69 run --once left files queued (destination
    unreachable); 75 another instance holds the profile's lock.
    """

    package static func text(for command: String?) -> String {
        switch command {
        case "run": return """
            uploader run [--config PATH] [--profile NAME]... [--once]

            Watches every outbox (or only the --profile ones) and uploads what lands there,
            until SIGTERM or SIGINT (uploads in flight get shutdown_grace, then stay queued;
            exit 0). SIGHUP reloads the config; an invalid one is logged and the old one kept.
            Under systemd (Type=notify) it reports READY=1, STATUS=, STOPPING=1 and watchdog
            pings through $NOTIFY_SOCKET.
              --config PATH    configuration file
              --profile NAME   run only this profile (repeatable)
              --once           upload everything queued and every retry due now, then exit
                               (0 all sent, 1 some went to retry/, 69 destination unreachable,
                               75 another instance holds the lock)
            """
        case "status": return """
            uploader status [--config PATH] [--profile NAME]... [--json]

            Reads the spools (no daemon needed): files and bytes queued, uploading, in retry,
            failed, sent in the last 24 h; the oldest queued file's age; the last error. While
            a daemon runs, also why a profile is paused and each upload in flight: percent, bytes
            sent of size, rate, ETA.
              --config PATH    configuration file
              --profile NAME   only this profile (repeatable)
              --json           one JSON object with stable keys, for scripts
            """
        case "retry": return """
            uploader retry [--config PATH] [--profile NAME]... (--all | FILE...)

            Moves files from retry/ back to the outbox for an immediate attempt, resetting their
            backoff (their history stays in the manifest). Works while a daemon runs.
              --config PATH    configuration file
              --profile NAME   only this profile's retry/ (repeatable)
              --all            every file in retry/
              FILE             a path to a file in a retry/, or a name looked up in retry/
            """
        case "enqueue": return """
            uploader enqueue [--config PATH] --profile NAME [--move] FILE...

            Puts files into a profile's outbox safely: copied to a hidden temporary name,
            fsynced, then renamed, so the daemon never sees a half-written file.
              --config PATH    configuration file
              --profile NAME   the profile whose outbox receives the files
              --move           rename instead of copy (same filesystem only)
            """
        case "check-config": return """
            uploader check-config [--config PATH]

            Parses and validates the configuration and prints it in effect, defaults filled
            in and secrets shown as <redacted>; exits 0. Otherwise prints each error as
            PATH:LINE: message and exits 2.
              --config PATH    configuration file
            """
        case "help": return "uploader help COMMAND\n\nShows the help of one command: run, status, retry, enqueue, check-config."
        default: return overview
        }
    }
}

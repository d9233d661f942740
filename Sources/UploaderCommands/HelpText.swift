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
      uploader status [--config PATH] [--profile NAME]... [--json | --check] [--expect-daemon]
      uploader retry [--config PATH] [--profile NAME]... (--all | FILE...)
      uploader enqueue [--config PATH] --profile NAME [--move] FILE...
      uploader check-config [--config PATH]
      uploader --version | --help | help COMMAND

    The config is --config, else $UPLOADER_CONFIG, else /etc/uploader/uploader.conf
    (the working directory is never searched).

    Exit status:
      0   success
      1   run --once sent a file to retry/ or failed; retry, enqueue: a file not handled
      64  usage error (EX_USAGE)
      69  run --once left files queued: destination unreachable (EX_UNAVAILABLE)
      70  internal error (EX_SOFTWARE)
      73  a spool or its lock cannot be made or written (EX_CANTCREAT)
      75  another instance holds a profile's lock (EX_TEMPFAIL)
      77  run by a user who may not act on the spool (EX_NOPERM)
      78  configuration error (EX_CONFIG)
    status also exits 2 to 5 when something needs an operator (see uploader help
    status), and status --check 0 to 3 (OK, WARNING, CRITICAL, UNKNOWN).
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

            Exit status: 0 stopped by SIGTERM/SIGINT, or --once sent all (or had nothing to
            do); 1 --once sent some file to retry/ or failed; 69 --once left files queued, the
            destination unreachable; 70 internal error; 73 a spool or its lock cannot be made
            or written; 75 another instance holds a profile's lock; 77 the spool belongs to
            another user; 64 usage error; 78 configuration error.
            """
        case "status": return """
            uploader status [--config PATH] [--profile NAME]... [--json | --check] [--expect-daemon]

            Reads the spools (no daemon, no secret needed): files and bytes queued, uploading,
            in retry, failed, sent in the last 24 h; the oldest queued file's age; the last
            error. While a daemon runs, also why a profile is paused and each upload in flight:
            percent, bytes sent of size, rate, ETA.
              --config PATH    configuration file
              --profile NAME   only this profile (repeatable)
              --json           one JSON object with stable keys, for scripts
              --expect-daemon  a profile with no daemon running needs an operator
              --check          one line for Nagios, Icinga, Zabbix (Monitoring Plugins):
                               exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN
              --warn-queued N, --crit-queued N     more than N files queued
              --warn-age DURATION, --crit-age DURATION
                               the oldest queued file waits longer (e.g. 15m, 2h)
              --warn-failed N, --crit-failed N     more than N files failed for good
                               (default: WARNING above 0, never CRITICAL)

            Exit status, the highest that applies:
              0   nothing needs an operator
              2   files failed for good (they wait for uploader retry)
              3   a profile paused until an operator acts (credentials refused)
              4   a daemon died without a clean exit (its .state.json is left and
                  no process holds the lock), or none runs with --expect-daemon
              5   a spool cannot be read (missing, or no permission)
              64  usage error; 78 configuration error
            With --check: OK, or CRITICAL for 3 and 4, UNKNOWN for 5, and WARNING or
            CRITICAL for the thresholds.
            """
        case "retry": return """
            uploader retry [--config PATH] [--profile NAME]... (--all | FILE...)

            Moves files from retry/ back to the outbox for an immediate attempt, resetting their
            backoff (their history stays in the manifest). Works while a daemon runs.
              --config PATH    configuration file
              --profile NAME   only this profile's retry/ (repeatable)
              --all            every file in retry/
              FILE             a path to a file in a retry/, or a name looked up in retry/

            Reads no secret. Exit status: 0 all moved back; 1 some file could not be; 77 the
            spool belongs to another user; 64 usage error; 78 configuration error.
            """
        case "enqueue": return """
            uploader enqueue [--config PATH] --profile NAME [--move] FILE...

            Puts files into a profile's outbox safely: copied to a hidden temporary name,
            fsynced, then renamed, so the daemon never sees a half-written file.
              --config PATH    configuration file
              --profile NAME   the profile whose outbox receives the files
              --move           rename instead of copy (same filesystem only)

            Reads no secret. Exit status: 0 all enqueued; 1 some file could not be; 77 run by
            a user who may not write the outbox; 64 usage error; 78 configuration error.
            """
        case "check-config": return """
            uploader check-config [--config PATH]

            Parses and validates the configuration and prints it in effect, defaults filled
            in and secrets shown as <redacted>, after a first line naming the file read
            (# config: PATH); exits 0. Otherwise prints each error as PATH:LINE: message
            and exits 78.
              --config PATH    configuration file
            """
        case "help": return "uploader help COMMAND\n\nShows the help of one command: run, status, retry, enqueue, check-config."
        default: return overview
        }
    }
}

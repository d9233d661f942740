@preconcurrency import Glibc
import Foundation

/// The Python of the checkout's virtual environment, `<package>/.venv`, which
/// scripts/install-deps.sh makes with the third-party test tools (moto, boto3, botocore,
/// prometheus_client, tuspyserver, uvicorn, fastapi), so the machine's own Python is left as
/// its distribution has it. The one way tests find those tools. Scripts that need only the
/// standard library (fault_server.py, mkman.py) run on the system's python3.
enum TestPython {
    static let venv = PackagePaths.root + "/.venv"

    /// `<package>/.venv/bin/python3`; throws, saying how to make it, when it is absent.
    static func path() throws -> String {
        let python = venv + "/bin/python3"
        guard access(python, X_OK) == 0 else {
            throw HarnessError("no Python virtual environment at \(venv) (\(python) is not executable): "
                + "run scripts/install-deps.sh, which makes it with the test tools")
        }
        return python
    }

    /// Throws, naming the missing packages, unless the virtual environment imports `modules`.
    static func require(_ modules: String, packages: String) throws {
        let check = try ProcessRunner.run([try path(), "-c", "import \(modules)"], timeout: 60)
        guard check.exitCode == 0 else {
            throw HarnessError("\(packages) missing from \(venv): run scripts/install-deps.sh: \(check.stderr)")
        }
    }
}

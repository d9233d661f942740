import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// `sftp://`, `ftps://` and `ftp://` profiles (DESIGN §14): what they need, what they refuse,
/// and the server paths a file's names render to.
@Suite struct RemoteFileConfigTests {
    let path = "/nonexistent-uploader-test/uploader.conf"

    func errors(_ lines: String) -> [String] { ConfigFixture.errors("[outbox p]\nspool = /s\n" + lines + "\n") }

    @Test func anSFTPURLNeedsAHostKeySettingAndALogin() {
        #expect(errors("url = sftp://u@h/drop/{path}") == [
            "\(path):3: sftp:// url needs private_key_file or password_file in [outbox p]",
            "\(path):3: sftp:// url needs known_hosts or host_key_sha256 in [outbox p]: the server's host key is always checked "
                + "(ssh-keygen -lf on the server's key prints its SHA256 fingerprint)",
        ])
    }

    @Test func httpKeysAndABadFingerprintAreRefusedWithTheirLines() {
        #expect(errors("url = sftp://u@h/drop/{path}\npassword = pw\nhost_key_sha256 = SHA256:short\nmethod = POST\ntls = none") == [
            "\(path):5: invalid fingerprint \"SHA256:short\" for host_key_sha256 (the SHA256:… that ssh-keygen -lf prints, 43 base64 characters)",
            "\(path):6: method is not used with sftp:// urls",
            "\(path):7: tls is not used with sftp:// urls (SSH checks the server by its host key)",
        ])
        #expect(errors("url = ftps://u@h/drop/{path}\npassword = pw\ntls = none") == [
            "\(path):5: tls = none contradicts ftps:// (implicit TLS); use ftp:// for plain FTP",
        ])
        #expect(errors("url = ftp://u@h/drop/{path}\npassword = pw\ntemp_name = part.tmp") == [
            "\(path):5: temp_name must contain {name}, so that two files never share a temporary name",
        ])
    }

    @Test func namesRenderToServerPathsBesideEachOther() throws {
        let config = try #require(ConfigFixture.config("""
            [outbox p]
            spool = /s
            url = ftp://u@h:2121/in%20box/{path}
            password = pw
            """))
        guard case .remoteFile(let target) = config.profiles[0].destination else { Issue.record("not a remote file"); return }
        #expect(target.port == 2121 && target.tls == .required && target.exists == .overwrite)
        let values = TemplateValues(path: RelativePath("cam 1/a.jpg"), id: "i", sha256: "", size: 1, date: Date(), profile: "p", hostname: "h")
        let names = RemoteFileNames(target: target, values: values)
        #expect(names.final == "in box/cam 1/a.jpg")
        #expect(names.temporary == "in box/cam 1/.a.jpg.part")
        #expect(names.alternative(2) == "in box/cam 1/a.2.jpg")
        #expect(CurlRemoteFileSession.url(target, names.final) == "ftp://u@h:2121/in%20box/cam%201/a.jpg")
        #expect(CurlRemoteFileSession.url(target, "/srv/x") == "ftp://u@h:2121/%2Fsrv/x")
    }
}

import Foundation
import UploaderSupport

/// The upload policy keys of DESIGN §8 (`order`, `upload_window`, `max_rate`, `interfaces`),
/// each checked with a `PATH:LINE:` error of its own.
extension ProfileBuilder {
    static let policyKeys = ["order", "upload_window", "interfaces"]

    mutating func readPolicy(into profile: inout Profile) {
        profile.order = reader.choice("order", default: profile.order)
        if let text = reader.text("upload_window") {
            switch UploadWindows.parse(text) {
            case .success(let windows): profile.uploadWindows = windows
            case .failure(let error): reader.diagnostics.error(reader.line("upload_window"), error.message)
            }
        }
        if let text = reader.text("max_rate"), text.contains(",") {
            switch RateSchedule.parse(text) {
            case .success(let schedule): profile.maxRate = schedule
            case .failure(let error): reader.diagnostics.error(reader.line("max_rate"), error.message)
            }
        } else {
            profile.maxRate = reader.value("max_rate", kind: "rate", hint: "use a size per second, e.g. 512KiB or 10MiB; 0 = no cap; or a timetable such as 08:00,512KiB 23:00,off") { text in
                // Nil is reported by `value` as this line's error, with the hint.
                if case .success(let schedule) = RateSchedule.parse(text) { schedule } else { nil }
            } ?? profile.maxRate
        }
        if let text = reader.text("interfaces") {
            let names = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
            // IFNAMSIZ is 16 with its NUL; '/' and blanks are the only bytes the kernel refuses.
            if let bad = names.first(where: { $0.utf8.count > 15 || $0.contains("/") || $0 == "." || $0 == ".." }) {
                reader.diagnostics.error(reader.line("interfaces"), "invalid interface name \(quotedForMessage(String(bad), limit: 40)) in interfaces (at most 15 bytes, no \"/\")")
            } else {
                profile.interfaces = names
            }
        }
    }
}

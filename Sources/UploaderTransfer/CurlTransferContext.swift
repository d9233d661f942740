import CCurl
import Foundation
import UploaderSupport
import UploaderConfig

/// The per-request state libcurl's C callbacks reach through their `void *` userdata.
///
/// Lives only on the transfer thread for the duration of one `curl_easy_perform`, so it
/// needs no locking; `CurlTransport` keeps it alive with `withExtendedLifetime`.
final class CurlTransferContext {
    static let responseBodyLimit = 64 * 1024

    let segments: [RequestBody.Segment]
    /// Start offset of each segment within the body.
    let starts: [Int64]
    let length: Int64
    let rateLimiter: RateLimiter?
    let cancellation: CancellationFlag
    let progress: (@Sendable (Int64) -> Void)?
    let sourcePath: String?

    /// Next body byte curl will get from the read callback.
    var position: Int64 = 0
    /// Set when our read callback failed (the file, not the network).
    var readError: String?
    var lastProgress: Int64 = -1
    /// Our own stall detection: curl's LOW_SPEED check averages over several seconds.
    let stallTimeout: TimeInterval
    var lastMoved: (uploaded: Int64, downloaded: Int64, at: Double) = (0, 0, CurlTransferContext.now())
    /// Set when the progress callback aborted because nothing moved for `stallTimeout`.
    var stalled = false
    /// Set when libcurl wanted to send the request a second time and we refused. It does so
    /// when a reused keep-alive connection dies before an answer; the destination may well
    /// have received the first request, and an attempt is one request (DESIGN §1), so the
    /// exchange ends as broken and the caller's retry sends it again as a counted attempt.
    var resendRefused = false
    /// Requests libcurl began to send in this `curl_easy_perform` (its pre-request callback).
    var requestsStarted = 0

    /// The response's status line and the headers the request acts on, as they arrive.
    var head: ResponseHead
    var responseBody: [UInt8] = []

    /// CURLOPT_ERRORBUFFER storage (CURL_ERROR_SIZE bytes).
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(request: UploadRequest) {
        segments = request.body.segments
        var starts: [Int64] = []
        var offset: Int64 = 0
        for segment in segments {
            starts.append(offset)
            offset += segment.length
        }
        self.starts = starts
        length = offset
        rateLimiter = request.rateLimiter
        cancellation = request.cancellation
        progress = request.progress
        sourcePath = request.sourcePath
        stallTimeout = request.stallTimeout
        head = ResponseHead(keeping: request.keepHeaders)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    var errorDetail: String { String(cString: errorBuffer) }

    static func now() -> Double { KernelClock.monotonicSeconds }

    /// Called from the progress callback; false when the transfer should stop.
    func progressed(uploaded: Int64, downloaded: Int64) -> Bool {
        if cancellation.isCancelled { return false }
        if uploaded != lastProgress {
            lastProgress = uploaded
            progress?(uploaded)
        }
        let now = CurlTransferContext.now()
        if uploaded != lastMoved.uploaded || downloaded != lastMoved.downloaded {
            lastMoved = (uploaded, downloaded, now)
        } else if stallTimeout > 0 && (uploaded > 0 || downloaded > 0) && now - lastMoved.at >= stallTimeout {
            // Only once bytes have moved: before that the connect timeout is in charge.
            stalled = true
            return false
        }
        return true
    }

    /// Copies up to `capacity` body bytes at `position` into `buffer`; nil on a read failure.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
        guard position < length, capacity > 0 else { return 0 }
        var index = starts.lastIndex(where: { $0 <= position }) ?? 0
        while index < segments.count - 1 && starts[index] + segments[index].length <= position { index += 1 }
        let within = position - starts[index]
        let available = segments[index].length - within
        var wanted = Int(min(Int64(capacity), available))
        if let rateLimiter { wanted = min(wanted, rateLimiter.acquire(wanted)) }
        switch segments[index] {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { raw in
                buffer.copyMemory(from: raw.baseAddress! + Int(within), byteCount: wanted)
            }
            position += Int64(wanted)
            return wanted
        case .file(let fd, let offset, _):
            let n: Int
            do {
                n = try KernelCalls().read(SystemDescriptor(rawValue: fd), into: UnsafeMutableRawBufferPointer(start: buffer, count: wanted),
                                           at: offset + within)
            } catch {
                readError = SystemError("read", path: sourcePath, code: error).description
                return nil
            }
            guard n > 0 else {
                readError = "read\(sourcePath.map { " \($0)" } ?? ""): file is shorter than expected (changed while uploading?)"
                return nil
            }
            position += Int64(n)
            return n
        }
    }

    /// One raw response header line; a status line resets what an earlier response set.
    func header(_ line: UnsafeRawBufferPointer) {
        if head.take(line) { responseBody.removeAll() }
    }

    /// Keeps the first 64 KiB of the response body and drops the rest.
    func body(_ data: UnsafeRawBufferPointer) {
        let room = CurlTransferContext.responseBodyLimit - responseBody.count
        guard room > 0 else { return }
        responseBody.append(contentsOf: data.prefix(room))
    }
}

// libcurl callbacks: non-capturing closures as C function pointers; state comes via userdata.

let curlReadCallback: uploader_curl_data_cb = { buffer, size, count, userdata in
    let context = Unmanaged<CurlTransferContext>.fromOpaque(userdata!).takeUnretainedValue()
    if context.cancellation.isCancelled { return Int(CURL_READFUNC_ABORT) }
    guard let n = context.read(into: UnsafeMutableRawPointer(buffer!), capacity: size * count) else {
        return Int(CURL_READFUNC_ABORT)
    }
    return n
}

let curlSeekCallback: uploader_curl_seek_cb = { userdata, offset, origin in
    let context = Unmanaged<CurlTransferContext>.fromOpaque(userdata!).takeUnretainedValue()
    guard origin == SEEK_SET, offset >= 0, Int64(offset) <= context.length else { return CURL_SEEKFUNC_FAIL }
    // libcurl rewinds a body it has read only to send the request again by itself (a reused
    // connection died before answering): refused, see `CurlTransferContext.resendRefused`.
    if context.position > 0 && Int64(offset) != context.position {
        context.resendRefused = true
        return CURL_SEEKFUNC_CANTSEEK
    }
    context.position = Int64(offset)
    return CURL_SEEKFUNC_OK
}

/// Called just before each request goes out: the first one passes; a second one in the same
/// perform is libcurl re-sending on its own (for an empty body there is nothing to rewind, so
/// the seek callback never hears of it) and is refused.
let curlPrerequestCallback: uploader_curl_prereq_cb = { userdata, _, _, _, _ in
    let context = Unmanaged<CurlTransferContext>.fromOpaque(userdata!).takeUnretainedValue()
    context.requestsStarted += 1
    guard context.requestsStarted == 1 else {
        context.resendRefused = true
        return CURL_PREREQFUNC_ABORT
    }
    return CURL_PREREQFUNC_OK
}

let curlHeaderCallback: uploader_curl_data_cb = { buffer, size, count, userdata in
    let context = Unmanaged<CurlTransferContext>.fromOpaque(userdata!).takeUnretainedValue()
    let raw = UnsafeRawBufferPointer(start: buffer, count: size * count)
    context.header(raw)
    return size * count
}

let curlWriteCallback: uploader_curl_data_cb = { buffer, size, count, userdata in
    let context = Unmanaged<CurlTransferContext>.fromOpaque(userdata!).takeUnretainedValue()
    context.body(UnsafeRawBufferPointer(start: buffer, count: size * count))
    return size * count
}

let curlProgressCallback: uploader_curl_xferinfo_cb = { userdata, _, downloaded, _, uploaded in
    let context = Unmanaged<CurlTransferContext>.fromOpaque(userdata!).takeUnretainedValue()
    return context.progressed(uploaded: Int64(uploaded), downloaded: Int64(downloaded)) ? 0 : 1
}

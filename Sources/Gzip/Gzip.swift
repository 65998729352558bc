// Gzip: zlib's deflate with a gzip wrapper, behind one call on byte arrays.
// Bodies here are compressed once and served many times (static files, cached
// pages), so a whole-buffer call is all that is needed: no streaming, no NIO.
import CZlib

/// gzip compression through zlib, for bodies compressed once and served many times.
public enum Gzip {
    /// The gzip form of `bytes` at `level` (1 fast … 9 small).
    public static func compress(_ bytes: [UInt8], level: Int32 = 9) -> [UInt8] {
        var stream = z_stream()
        guard wf_deflate_init_gzip(&stream, level) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 32)
        var input = bytes
        let produced: Int = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                let result = deflate(&stream, Z_FINISH)
                return result == Z_STREAM_END ? outBuffer.count - Int(stream.avail_out) : -1
            }
        }
        guard produced >= 0 else { return [] }
        output.removeLast(output.count - produced)
        return output
    }
}

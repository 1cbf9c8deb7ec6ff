package dev.ratelimit.sample.geocoding.web;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Type;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.RequestBodyAdviceAdapter;

/**
 * Bounds the body of {@code POST /api/geocode/batch} before it is parsed: a body above
 * {@value #MAX_BYTES} bytes is refused with 413, at once when its {@code Content-Length}
 * says so, else as soon as that many bytes have been read.
 */
@ControllerAdvice
public class BatchBodyLimit extends RequestBodyAdviceAdapter {

	// A JSON array is read whole into memory, so without a bound one request of tens of
	// megabytes (millions of tiny
	// elements) would hold the heap for the price of one permit. The largest valid batch
	// (MAX_BATCH_QUERIES queries
	// of MAX_QUERY_LENGTH characters, each written as a six-byte JSON escape) stays below
	// it.
	/** The largest batch body read, in bytes. */
	public static final long MAX_BYTES = 256 * 1024;

	@Override
	public boolean supports(MethodParameter parameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) {
		return targetType == GeocodeBatch.class;
	}

	@Override
	public HttpInputMessage beforeBodyRead(HttpInputMessage message, MethodParameter parameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) throws IOException {
		if (message.getHeaders().getContentLength() > MAX_BYTES) {
			throw new BodyTooLargeException(MAX_BYTES);
		}
		InputStream limited = new LimitedInputStream(message.getBody(), MAX_BYTES);
		return new HttpInputMessage() {

			@Override
			public InputStream getBody() {
				return limited;
			}

			@Override
			public HttpHeaders getHeaders() {
				return message.getHeaders();
			}

		};
	}

	/**
	 * A body larger than the bound; Spring MVC reports it as an unreadable body caused by
	 * this.
	 */
	public static final class BodyTooLargeException extends IOException {

		private final long maxBytes;

		BodyTooLargeException(long maxBytes) {
			super("The request body is larger than " + maxBytes + " bytes");
			this.maxBytes = maxBytes;
		}

		/**
		 * Returns the bound that was exceeded.
		 * @return the largest body read, in bytes
		 */
		public long maxBytes() {
			return this.maxBytes;
		}

	}

	/**
	 * Fails a read that would go past the bound.
	 */
	private static final class LimitedInputStream extends FilterInputStream {

		private long remaining;

		private final long maxBytes;

		LimitedInputStream(InputStream in, long maxBytes) {
			super(in);
			this.remaining = maxBytes;
			this.maxBytes = maxBytes;
		}

		@Override
		public int read() throws IOException {
			int read = super.read();
			if (read >= 0) {
				consumed(1);
			}
			return read;
		}

		@Override
		public int read(byte[] buffer, int offset, int length) throws IOException {
			int read = super.read(buffer, offset, length);
			if (read > 0) {
				consumed(read);
			}
			return read;
		}

		@Override
		public long skip(long n) throws IOException {
			long skipped = super.skip(n);
			consumed(skipped);
			return skipped;
		}

		private void consumed(long bytes) throws BodyTooLargeException {
			this.remaining -= bytes;
			if (this.remaining < 0) {
				throw new BodyTooLargeException(this.maxBytes);
			}
		}

	}

}

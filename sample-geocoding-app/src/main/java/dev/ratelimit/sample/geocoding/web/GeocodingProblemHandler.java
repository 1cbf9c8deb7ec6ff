package dev.ratelimit.sample.geocoding.web;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.TypeMismatchException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Turns every client error of the geocoding API into an RFC 9457 problem
 * ({@code application/problem+json}) that names the offending {@code parameter} and says
 * what would be right, rather than a 500 or an HTML page.
 */
@RestControllerAdvice
public class GeocodingProblemHandler extends ResponseEntityExceptionHandler {

	/** The problem title of a rejected parameter or body. */
	public static final String INVALID_REQUEST_TITLE = "Invalid geocoding request";

	/** The problem property naming the parameter or body element that is wrong. */
	public static final String PARAMETER_PROPERTY = "parameter";

	@Override
	protected @Nullable ResponseEntity<Object> handleMissingServletRequestParameter(
			MissingServletRequestParameterException ex, HttpHeaders headers, HttpStatusCode status,
			WebRequest request) {
		String name = ex.getParameterName();
		ProblemDetail problem = invalid(name, "Parameter '" + name + "' is required" + example(name) + ".");
		return handleExceptionInternal(ex, problem, headers, status, request);
	}

	@Override
	protected @Nullable ResponseEntity<Object> handleTypeMismatch(TypeMismatchException ex, HttpHeaders headers,
			HttpStatusCode status, WebRequest request) {
		String name = (ex instanceof MethodArgumentTypeMismatchException argumentMismatch) ? argumentMismatch.getName()
				: String.valueOf(ex.getPropertyName());
		Class<?> type = ex.getRequiredType();
		String expected = (type == int.class || type == Integer.class || type == long.class || type == Long.class)
				? "a whole number" : (type == double.class || type == Double.class) ? "a number" : "valid";
		ProblemDetail problem = invalid(name,
				"Parameter '" + name + "' must be " + expected + ", but was '" + abbreviate(ex.getValue()) + "'.");
		return handleExceptionInternal(ex, problem, headers, status, request);
	}

	@Override
	protected @Nullable ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidGeocodingRequestException invalid) {
				return handleExceptionInternal(ex, invalid.getBody(), headers, status, request);
			}
			if (cause instanceof BatchBodyLimit.BodyTooLargeException tooLarge) {
				ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONTENT_TOO_LARGE,
						"The request body must be at most " + tooLarge.maxBytes() + " bytes: a JSON array of 1 to "
								+ GeocodingController.MAX_BATCH_QUERIES + " queries.");
				problem.setTitle("Request body too large");
				return handleExceptionInternal(ex, problem, headers, HttpStatus.CONTENT_TOO_LARGE, request);
			}
		}
		ProblemDetail problem = invalid("body",
				"The request body must be a JSON array of query strings, such as [\"Rabat\",\"Casablanca\"].");
		return handleExceptionInternal(ex, problem, headers, status, request);
	}

	private static ProblemDetail invalid(String parameter, String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, detail);
		problem.setTitle(INVALID_REQUEST_TITLE);
		problem.setProperty(PARAMETER_PROPERTY, parameter);
		return problem;
	}

	private static String example(String parameter) {
		return switch (parameter) {
			case "q" -> ", for example q=Rabat";
			case "lat" -> ", for example lat=34.0209";
			case "lon" -> ", for example lon=-6.8416";
			default -> "";
		};
	}

	private static String abbreviate(@Nullable Object value) {
		// a parameter given twice (?lat=north&lat=1) arrives as an array
		String text = (value instanceof Object[] values)
				? String.join(", ", Arrays.stream(values).map(String::valueOf).toList()) : String.valueOf(value);
		return (text.length() <= 40) ? text : text.substring(0, 40) + "…";
	}

}

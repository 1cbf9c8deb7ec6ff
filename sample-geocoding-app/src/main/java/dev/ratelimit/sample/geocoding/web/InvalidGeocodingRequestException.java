package dev.ratelimit.sample.geocoding.web;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * A request parameter or body that the geocoding API rejects with 400 Bad Request.
 * Rendered by {@link GeocodingProblemHandler} as an RFC 9457 problem naming the offending
 * {@code parameter}.
 */
public class InvalidGeocodingRequestException extends ErrorResponseException {

	private final String parameter;

	/**
	 * Creates an exception for a bad value.
	 * @param parameter the request parameter, or body element such as {@code queries[3]},
	 * that is wrong
	 * @param detail what is wrong and what would be right, for the problem's
	 * {@code detail}
	 */
	public InvalidGeocodingRequestException(String parameter, String detail) {
		super(HttpStatus.BAD_REQUEST, problem(parameter, detail), null);
		this.parameter = parameter;
	}

	private static ProblemDetail problem(String parameter, String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, detail);
		problem.setTitle(GeocodingProblemHandler.INVALID_REQUEST_TITLE);
		problem.setProperty(GeocodingProblemHandler.PARAMETER_PROPERTY, parameter);
		return problem;
	}

	/**
	 * Returns the request parameter or body element that is wrong.
	 * @return the parameter's name
	 */
	public String getParameter() {
		return this.parameter;
	}

	@Override
	public String getMessage() {
		return getBody().getDetail();
	}

}

package dev.ratelimit.example.quotes.web;

import java.net.URI;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.example.quotes.market.UnknownSymbolException;

/**
 * Answers a symbol that no listing has with a 404 problem that says where the symbols are
 * listed.
 */
@RestControllerAdvice
public class QuoteProblemHandler {

	@ExceptionHandler(UnknownSymbolException.class)
	ResponseEntity<ProblemDetail> unknownSymbol(UnknownSymbolException exception, ServerWebExchange exchange) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND,
				exception.getMessage() + ". GET /api/symbols lists the symbols.");
		problem.setTitle("Unknown symbol");
		problem.setInstance(URI.create(exchange.getRequest().getPath().value()));
		problem.setProperty("symbol", exception.getSymbol());
		// explicit, since a stream's request accepts text/event-stream only
		return ResponseEntity.status(HttpStatus.NOT_FOUND)
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.body(problem);
	}

}

import { AppError, BadRequestError, NotFoundError } from '../errors/app-error.ts';

/** Errors of the knowledge capability; codes listed in docs/errors.md ("Knowledge"). */

/** A malformed id, a missing source and another company's source all look the same (no existence oracle). */
export class KnowledgeSourceNotFoundError extends NotFoundError {
  constructor() {
    super('knowledge_source_not_found', 'No such knowledge source.');
  }
}

export class InvalidKnowledgeSourceError extends BadRequestError {
  constructor(field: string, message: string) {
    super('invalid_knowledge_source', `${field} ${message}.`, { errors: [{ field, message }] });
  }
}

export class KnowledgeSourceTooLargeError extends AppError {
  constructor(maxBytes: number) {
    super(413, 'knowledge_source_too_large', `The source is larger than ${maxBytes} bytes.`, {
      max_source_bytes: maxBytes,
    });
  }
}

export class KnowledgeTypeNotSupportedError extends AppError {
  constructor(given: string) {
    super(
      415,
      'knowledge_type_not_supported',
      `Knowledge sources are markdown, HTML, plain text or PDF; got ${JSON.stringify(given.slice(0, 100))}.`,
    );
  }
}

/** A company synonym list that breaks a rule of packages/server/src/knowledge/synonyms.ts; `field` names the place. */
export class InvalidKnowledgeSynonymsError extends BadRequestError {
  constructor(field: string, message: string) {
    super('invalid_knowledge_synonyms', `${field} ${message}.`, { errors: [{ field, message }] });
  }
}

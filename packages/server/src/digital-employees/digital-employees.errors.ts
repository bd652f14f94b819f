import { AppError, BadRequestError, ConflictError, NotFoundError } from '../errors/app-error.ts';

/**
 * Stable error codes of the digital-employees service (docs/errors.md "Digital employees"). Each is an AppError, so
 * routes answer them as problem+json and the CLI prints `{error:{code,message}}`.
 */
export class DigitalEmployeeNotFoundError extends NotFoundError {
  constructor() {
    super('digital_employee_not_found', 'No such digital employee.');
  }
}

/** A field failed validation; `field` names it (also in the problem's `errors` member). */
export class InvalidDigitalEmployeeError extends BadRequestError {
  constructor(
    code:
      | 'invalid_name'
      | 'invalid_responder'
      | 'invalid_model'
      | 'invalid_system_prompt'
      | 'invalid_settings'
      | 'connector_required'
      | 'connector_not_allowed',
    readonly field: string,
    detail: string,
  ) {
    super(code, detail, { errors: [{ field, message: detail }] });
  }
}

/** The connector does not exist in this company (another company's connector is reported the same way). */
export class ConnectorNotFoundForDigitalEmployeeError extends AppError {
  constructor() {
    super(400, 'connector_not_found', 'No such connector in this company.', {
      errors: [{ field: 'connector_id', message: 'no such connector in this company' }],
    });
  }
}

export class ConnectorTypeMismatchError extends BadRequestError {
  constructor(responder: string, connectorType: string) {
    super(
      'connector_type_mismatch',
      `A ${responder} digital employee needs a ${responder} connector; this connector is of type ${connectorType}.`,
      { errors: [{ field: 'connector_id', message: `must be a ${responder} connector` }] },
    );
  }
}

/** The company's default cannot be taken away except by making another digital employee the default. */
export class DefaultRequiredError extends ConflictError {
  constructor() {
    super(
      'default_digital_employee_required',
      'A company always has exactly one default digital employee; make another one the default instead.',
    );
  }
}

export class DigitalEmployeeInUseError extends ConflictError {
  constructor() {
    super(
      'digital_employee_in_use',
      'A channel routes conversations to this digital employee; route the channel elsewhere first.',
    );
  }
}

import { AppError } from '../errors/app-error.ts';

export class NotSignedInError extends AppError {
  constructor() {
    super(401, 'not_signed_in', 'Sign in to the portal first (the session is missing or has expired).');
  }
}

export class ForbiddenRoleError extends AppError {
  constructor() {
    super(403, 'forbidden_role', 'Your role does not allow this; ask a company admin.');
  }
}

export class CsrfError extends AppError {
  constructor() {
    super(
      403,
      'csrf_failed',
      'The X-CSRF-Token header is missing or wrong; reload the portal and try again.',
    );
  }
}

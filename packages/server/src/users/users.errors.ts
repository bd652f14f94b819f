import { AppError, BadRequestError, ConflictError, NotFoundError } from '../errors/app-error.ts';

export const PASSWORD_MIN_LENGTH = 12;
/** argon2 hashes any length, but an unbounded input is a cheap way to burn CPU. */
export const PASSWORD_MAX_LENGTH = 256;
export const EMAIL_MAX_LENGTH = 254;
/** A display name fits a chat bubble's header and a notice line. */
export const NAME_MAX_LENGTH = 80;

export class InvalidEmailError extends BadRequestError {
  constructor() {
    super('invalid_email', 'The email address is not valid.', {
      errors: [{ field: 'email', message: 'is not a valid email address' }],
    });
  }
}

export class WeakPasswordError extends BadRequestError {
  constructor() {
    super('weak_password', `A password is ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`, {
      errors: [
        { field: 'password', message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` },
      ],
    });
  }
}

export class InvalidNameError extends BadRequestError {
  constructor() {
    super('invalid_name', `A display name is 1 to ${NAME_MAX_LENGTH} characters, on one line.`, {
      errors: [
        {
          field: 'name',
          message: `must be 1 to ${NAME_MAX_LENGTH} characters, without line breaks or control characters`,
        },
      ],
    });
  }
}

export class UserNotFoundError extends NotFoundError {
  constructor() {
    super('user_not_found', 'No portal user with this id in your company.');
  }
}

export class InvalidRoleError extends BadRequestError {
  constructor() {
    super('invalid_role', 'The role is admin or agent.', {
      errors: [{ field: 'role', message: 'must be admin or agent' }],
    });
  }
}

export class EmailTakenError extends ConflictError {
  constructor() {
    super('email_taken', 'A portal user with this email already exists.');
  }
}

/** One answer for unknown email and wrong password, so sign-in does not reveal which accounts exist. */
export class InvalidCredentialsError extends AppError {
  constructor() {
    super(401, 'invalid_credentials', 'The email or password is wrong.');
  }
}

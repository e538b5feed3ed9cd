import { Schema, type Connection, type Model } from 'mongoose';
import { ROLES } from '@pack/contracts';
import type { TokenRecord, UserRecord } from '../domain/store';

const userSchema = new Schema<UserRecord>(
  {
    _id: { type: Number, required: true },
    username: { type: String, required: true, unique: true },
    role: { type: String, enum: ROLES, required: true },
    created_at: { type: Date, required: true },
    origin: { type: String, enum: ['local', 'ldap', 'oidc'], default: 'local' },
    email: { type: String, default: null },
  },
  { versionKey: false, collection: 'users' },
);

const tokenSchema = new Schema<TokenRecord>(
  {
    _id: { type: Number, required: true },
    user_id: { type: Number, required: true, index: true },
    token_hash: { type: String, required: true, unique: true },
    prefix: { type: String, required: true },
    created_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    revocation_seq: { type: Number, default: null, index: true },
    expires_at: { type: Date, default: null },
  },
  { versionKey: false, collection: 'api_tokens' },
);

export function gatewayModels(connection: Connection) {
  return {
    users: connection.model('User', userSchema) as Model<UserRecord>,
    tokens: connection.model('ApiToken', tokenSchema) as Model<TokenRecord>,
  };
}
export type GatewayModels = ReturnType<typeof gatewayModels>;
